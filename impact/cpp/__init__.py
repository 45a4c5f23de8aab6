"""C++ and CMake extractors: the facts hipDNN's hand-written launch code states.

Maintainers: this package parses bytes it is handed and must not touch git or the
filesystem; callers read blobs and pass them in.
"""

from impact.cpp.cmake import extract_cmake_facts
from impact.cpp.facts import extract_cpp_facts
from impact.cpp.includes import resolve_include

__all__ = ["extract_cmake_facts", "extract_cpp_facts", "resolve_include"]

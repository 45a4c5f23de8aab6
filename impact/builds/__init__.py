"""Readers of the build files that say which extension modules a repository produces.

`setup_py.py` reads a setup.py (its `CUDAExtension`/`CppExtension`/`Extension` calls,
statically, through the small abstract interpreter of `pyeval.py` over `values.py`);
`cmake.py` reads the `cmake-call` facts of a CMakeLists.txt (`pybind11_add_module`,
`add_library(... MODULE|SHARED ...)`, `Python_add_library`); `archflags.py` says which
GPU architectures a compiler flag names. Pure functions over bytes and facts: nothing
here reads git; the graph's builds domain (impact/graph/builds.py) resolves what they
find against a tree. Import the module you need (`impact.builds.setup_py`): this package
imports nothing, so a report that parses nothing loads no parser through it.
"""

"""The second contract family's facts: Python op stubs ↔ C++ bindings ↔ C++ declarations.

Maintainers: everything here reads the bytes it is handed and never touches git or the
filesystem; every extractor returns sorted Facts and never raises.

- `extract_binding_python_facts` — `op-stub` (`@compile_ops`), `op-call` (calls into an
  imported extension or `torch.ops.<ns>`), `fake-twin` (`register_fake` twins).
- `extract_binding_cpp_facts` — `pybind-def`, `schema-def`, `torch-impl`, `boxed-read`,
  `cpp-function` and `binding-unreadable`.
- `extract_sources_map_facts` — `op-module` facts of `optCompilerConfig.json`-style maps.
- `parse_schema` / `SchemaError` — TORCH_LIBRARY schema strings.
"""

from __future__ import annotations

from impact.bindings.cpp_facts import extract_binding_cpp_facts
from impact.bindings.python_facts import extract_binding_python_facts
from impact.bindings.schema import SchemaError, parse_schema
from impact.bindings.sources_map import extract_sources_map_facts

__all__ = [
    "SchemaError",
    "extract_binding_cpp_facts",
    "extract_binding_python_facts",
    "extract_sources_map_facts",
    "parse_schema",
]

"""The symbol graph of a snapshot, split by domain, and the records each domain hands out.

`symbols.py` composes the domains per snapshot: `python.py` (modules, definitions,
imports, readers, reach), `descriptors.py` (descriptor files, KDP families, variants and
their archs, launch surfaces, symbol strings), `kernels.py` (builders and the copies of
their argument lists, paired by the rules of `pairing.py`; includes), all three over the
one networkx graph of `core.py`, and `bindings.py` (the op copies of the aiter and
flash-attention family, with `binding_reach.py`: which ops a change reaches), and
`builds.py` (the extension modules the build files declare). `records.py`,
`binding_records.py` and `build_records.py` hold the frozen records the queries return.
Outside this package a node id is an opaque string.
"""

from impact.graph.binding_reach import Reach, reach_of_change
from impact.graph.binding_records import *  # noqa: F403  (the records are the graph's API)
from impact.graph.binding_records import __all__ as _binding_records
from impact.graph.binding_renames import Rename, RenamedAlike, renamed_alike
from impact.graph.binding_routes import Route, forwarded_words, routes
from impact.graph.bindings import OP_KINDS, BindingsGraph, Copies
from impact.graph.build_records import (
    BuildFileFailure,
    BuildStep,
    ExtensionModule,
    PrebuildEdit,
    Unresolved,
)
from impact.graph.builds import BuildsGraph, covering_map, prebuild_edits
from impact.graph.call_binding import Binding, LayerParam, Signature, pybind_signature, takes
from impact.graph.core import DEFINITION_KINDS, module_node, symbol_node
from impact.graph.descriptors import DescriptorGraph, descriptor_type, family_key
from impact.graph.kernels import KernelGraph
from impact.graph.pairing import PATH_ARCH, abbreviates, name_forms, path_archs, same_name
from impact.graph.python import PythonGraph
from impact.graph.records import *  # noqa: F403
from impact.graph.records import __all__ as _records
from impact.graph.symbols import SymbolGraph, build_graph

__all__ = [*_records, *_binding_records, "DEFINITION_KINDS", "OP_KINDS", "PATH_ARCH", "Binding",
           "BindingsGraph", "BuildFileFailure", "BuildStep", "BuildsGraph", "Copies",
           "DescriptorGraph", "ExtensionModule", "KernelGraph", "LayerParam", "PrebuildEdit",
           "PythonGraph", "Reach", "Rename", "RenamedAlike", "Route", "Signature",
           "SymbolGraph", "Unresolved", "abbreviates", "build_graph", "covering_map",
           "descriptor_type", "family_key", "forwarded_words", "module_node", "name_forms",
           "path_archs", "prebuild_edits", "pybind_signature", "reach_of_change", "renamed_alike",
           "routes", "same_name", "symbol_node", "takes"]

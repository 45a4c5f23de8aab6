"""The symbol graph of a snapshot and the records it hands to the checks.

`symbols.py` builds the networkx graph and answers queries; `records.py` holds the frozen
records the queries return; `pairing.py` the rules that pair a copy of an argument list
with its builder. Outside this package a node id is an opaque string.
"""

from impact.graph.pairing import abbreviates, name_forms, same_name
from impact.graph.records import *  # noqa: F403  (the records are the graph's API)
from impact.graph.records import __all__ as _records
from impact.graph.symbols import (
    DEFINITION_KINDS,
    SymbolGraph,
    build_graph,
    module_node,
    symbol_node,
)

__all__ = [*_records, "DEFINITION_KINDS", "SymbolGraph", "abbreviates", "build_graph",
           "module_node", "name_forms", "same_name", "symbol_node"]

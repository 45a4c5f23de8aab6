"""Removed Python symbols that other code still imports or reads."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import ClassVar

from impact.checks.base import CheckContext
from impact.git import View
from impact.graph import DEFINITION_KINDS, SymbolGraph
from impact.rows import Hop, Row, Side, Status


class RemovedSymbolCheck:
    """What it checks:
        Every function, class or class member that a changed module defined at the base
        and no longer defines, traced to its readers through imports, package re-exports,
        module aliases and base classes.

    Why a break hurts at run time:
        Python resolves names when the code runs: the packer, a launcher or a kernel
        builder that still imports the removed name fails at pack or launch time on a
        machine with the ingestor flags on, while the default build stays green.

    Example:
        Breaks: `kernels/common/tiling.py` drops `ceil_div` while `gfx950/attention_dense.py`
        still imports it through `kernels.common` (even if another module defines a
        `ceil_div` of its own). Does not break: the same removal together with the readers'
        edits to import the new helper.

    When it says changed instead:
        A member removed from a class and read through a subclass or an untyped receiver
        (`spec.block_m`): the reader's imports reach the class, but only the types at run
        time decide whether the read hits it. A function re-signed (its parameters
        changed) while functions elsewhere still call it.

    Evidence:
        The definition at the base, the reader still bound to the old module at the new
        revision, and the import that binds it.
    """

    name: ClassVar[str] = "removed-symbol"
    surfaces: ClassVar[frozenset[str]] = frozenset({"rocke-library", "rocke-platform", "hkp-pack"})

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            yield from self._view(ctx, view)

    def _view(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        old_graph, new_graph = ctx.graph(view.old), ctx.graph(view.new)
        changed_files = set(view.diff.paths)
        for node, data in old_graph.graph.nodes(data=True):
            if data.get("kind") not in DEFINITION_KINDS or data.get("path") not in changed_files:
                continue
            module, name = str(data["module"]), str(data["name"])
            if data.get("path") in new_graph.parse_failures:
                continue  # the module no longer parses: not removed, unreadable (surface row)
            if node in new_graph.graph:
                if data.get("kind") == "function" and _signature(data) != _signature(
                        new_graph.graph.nodes[node]):
                    yield from self._resigned_rows(ctx, view, old_graph, new_graph, node, data)
                continue
            if "." in name:
                yield from self._member_rows(ctx, view, new_graph, node, data)
                continue
            for reader in sorted(old_graph.readers_of(node)):
                row = self._reader_row(ctx, view, old_graph, new_graph, node, module, name,
                                       reader)
                if row is not None:
                    yield row

    def _resigned_rows(self, ctx: CheckContext, view: View, old_graph: SymbolGraph,
                       new_graph: SymbolGraph, node: str, data: dict) -> Iterator[Row]:
        """A function whose parameters changed: every function elsewhere that still reads
        it is `changed` (whether its calls still fit is for a run to show)."""
        module = str(data["module"])
        for reader in sorted(old_graph.readers_of(node)):
            reader_data = old_graph.graph.nodes[reader]
            reader_module = str(reader_data.get("module"))
            if reader_data.get("kind") == "module" or reader_module == module:
                continue
            if reader not in new_graph.graph or node not in new_graph.edges_of(reader, {"reads"}):
                continue
            yield self._row(ctx, view, data, new_graph, reader_module,
                            str(reader_data.get("name")), Status.CHANGED,
                            f"'{data['name']}' re-signed "
                            f"({_signature(data)} -> {_signature(new_graph.graph.nodes[node])}); "
                            "still called here")

    def _member_rows(self, ctx: CheckContext, view: View, new_graph: SymbolGraph, node: str,
                     data: dict) -> Iterator[Row]:
        """A removed member: every function whose imports reach the class's module and
        that reads an attribute of that name is `changed` (its receiver's type decides)."""
        assert view.new is not None
        module, name = str(data["module"]), str(data["name"])
        cls, member = name.rsplit(".", 1)
        if f"py:{module}:{cls}" not in new_graph.graph:
            return  # the whole class went; readers of the class are traced by name
        for reader_module in new_graph.modules():
            if module not in new_graph.module_closure([reader_module]):
                continue
            for function in new_graph.functions_of(reader_module):
                uses = sorted(r for r in new_graph.reads_of(reader_module, function)
                              if r.endswith("." + member))
                if uses:
                    yield self._row(ctx, view, data, new_graph, reader_module, function,
                                    Status.CHANGED,
                                    f"member '{name}' removed; '{uses[0]}' may still read it")

    def _row(self, ctx: CheckContext, view: View, data: dict, new_graph: SymbolGraph,
             reader_module: str, reader: str, status: Status, reason: str) -> Row:
        assert view.new is not None
        module, name = str(data["module"]), str(data["name"])
        site = data["sites"][0]
        reader_path = str(new_graph.module_path(reader_module))
        node = f"py:{reader_module}:{reader}"
        line = 0
        if node in new_graph.graph and new_graph.graph.nodes[node].get("sites"):
            line = int(new_graph.graph.nodes[node]["sites"][0].get("line", 0))
        return Row(
            contract=self.name, view=view.name,
            subject=f"{module}.{name} <- {reader_module}.{reader}",
            status=status, reason=reason, archs=ctx.archs_for(reader_path, view.new),
            sides=(Side(str(data["path"]), int(site["line"]), "base", "changed", name),
                   Side(reader_path, line, view.name, "counterpart", reader)),
            evidence=(Hop(str(data["path"]), int(site["line"]), f"'{name}' defined at the base"),
                      Hop(reader_path, line, f"reads it from {reader_module}.{reader}")),
        )

    def _reader_row(self, ctx: CheckContext, view: View, old_graph: SymbolGraph,
                    new_graph: SymbolGraph, node: str, module: str, name: str,
                    reader: str) -> Row | None:
        reader_data = old_graph.graph.nodes[reader]
        reader_module = str(reader_data.get("module"))
        if reader_module == module and reader_data.get("kind") != "module":
            return None  # a reader in the same module: the surface row covers that file
        if new_graph.module_path(reader_module) is None:
            return None  # the reading module is gone too
        top = name.split(".")[0]
        still_bound = new_graph.bindings_to(reader_module, module, top)
        member = "." in name
        if reader_data.get("kind") == "module":
            if not still_bound:
                return None
            status, reason = Status.MISMATCH, f"'{name}' removed while still imported"
        else:
            function = str(reader_data.get("name"))
            if reader not in new_graph.graph:
                return None
            reads = set(new_graph.reads_of(reader_module, function))
            uses = {r for r in reads if r.split(".")[-1] == name.split(".")[-1] or r == top}
            if not uses:
                return None
            if member:
                status, reason = Status.CHANGED, f"member '{name}' removed; still read as " \
                    f"'{sorted(uses)[0]}' through a class the reader's imports reach"
            elif still_bound or reader_module == module:
                status, reason = Status.MISMATCH, f"'{name}' removed while still read"
            else:
                return None
        definition_path = str(old_graph.graph.nodes[node]["path"])
        site = old_graph.graph.nodes[node]["sites"][0]
        reader_path = str(new_graph.module_path(reader_module))
        line = int(reader_data.get("sites", [{"line": 0}])[0].get("line", 0)) \
            if reader_data.get("kind") != "module" else 0
        return Row(
            contract=self.name, view=view.name, subject=f"{module}.{name} <- {reader}",
            status=status, reason=reason,
            archs=ctx.archs_for(reader_path, view.new),
            sides=(Side(definition_path, int(site["line"]), "base", "changed", name),
                   Side(reader_path, line, view.name, "counterpart",
                        str(reader_data.get("name", reader_module)))),
            evidence=(Hop(definition_path, int(site["line"]), f"'{name}' defined at the base"),
                      Hop(reader_path, line, f"still bound to {module}.{name.split('.')[0]}")),
        )


def _signature(data: dict) -> str:
    """The parameter lists of every definition of a function, as one comparable text."""
    return " | ".join(
        "(" + ", ".join(f"{p.get('kind', '')[:3]} {p.get('name')}"
                        + ("=" if p.get("default") is not None else "")
                        for p in site.get("params", [])) + ")"
        for site in data.get("sites", []))

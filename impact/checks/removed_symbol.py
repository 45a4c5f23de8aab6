"""Removed Python symbols that other code still imports or reads.

Maintainers: reads definitions and their readers as PythonGraph records (never a graph
node or id scheme) and parse failures through the CheckContext; never parses source or
touches git. Its sentences live in `impact/render/words/`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from impact.checks.check import Check, Scope
from impact.graph import Definition, PythonGraph, Reader, ReadHow
from impact.kinds import FactKind, SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status


class RemovedSymbolCheck(Check):
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
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.ROCKE_LIBRARY, SurfaceKind.ROCKE_PLATFORM, SurfaceKind.HKP_PACK})

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx = scope.ctx
        old_graph, new_graph = ctx.graph(scope.old).python, ctx.graph(scope.new).python
        for path in sorted(scope.changed):
            module = old_graph.module_at(path)
            if module is None:
                continue
            if ctx.parse_failure(ctx.facts(scope.new, path)) is not None:
                continue  # the module no longer parses: not removed, unreadable (surface row)
            for definition in old_graph.definitions(module):
                yield from self._definition_rows(scope, old_graph, new_graph, definition)

    def _definition_rows(self, scope: Scope, old_graph: PythonGraph,
                         new_graph: PythonGraph, definition: Definition) -> Iterator[Row]:
        now = new_graph.definition(definition.module, definition.name)
        if now is not None:
            if definition.kind == FactKind.FUNCTION and definition.signature != now.signature:
                yield from self._resigned_rows(scope, old_graph, new_graph, definition, now)
            return
        if "." in definition.name:
            yield from self._member_rows(scope, new_graph, definition)
            return
        for reader in old_graph.readers(definition):
            row = self._reader_row(scope, new_graph, definition, reader)
            if row is not None:
                yield row

    def _resigned_rows(self, scope: Scope, old_graph: PythonGraph, new_graph: PythonGraph,
                       definition: Definition, now: Definition) -> Iterator[Row]:
        """A function whose parameters changed: every function elsewhere that still reads
        it is `changed` (whether its calls still fit is for a run to show)."""
        still = {(r.module, r.function) for r in new_graph.readers(now)
                 if r.how == ReadHow.READS}
        for reader in old_graph.readers(definition):
            if reader.function is None or reader.module == definition.module:
                continue
            if (reader.module, reader.function) not in still:
                continue
            yield self._row(scope, definition, new_graph, reader.module, reader.function,
                            Status.CHANGED, Reason.RESIGNED_WHILE_STILL_CALLED,
                            old_signature=definition.signature, new_signature=now.signature)

    def _member_rows(self, scope: Scope, new_graph: PythonGraph,
                     definition: Definition) -> Iterator[Row]:
        """A removed member: every function whose imports reach the class's module and
        that reads an attribute of that name is `changed` (its receiver's type decides)."""
        module = definition.module
        cls, member = definition.name.rsplit(".", 1)
        if new_graph.definition(module, cls) is None:
            return  # the whole class went; readers of the class are traced by name
        for reader_module in new_graph.modules():
            if module not in new_graph.module_closure([reader_module]):
                continue
            for function in new_graph.functions_of(reader_module):
                uses = sorted(r for r in new_graph.reads_of(reader_module, function)
                              if r.endswith("." + member))
                if uses:
                    yield self._row(scope, definition, new_graph, reader_module, function,
                                    Status.CHANGED, Reason.MEMBER_REMOVED_MAY_STILL_BE_READ,
                                    use=uses[0])

    def _row(self, scope: Scope, definition: Definition, new_graph: PythonGraph,
             reader_module: str, reader: str, status: Status, reason: Reason,
             **values: str) -> Row:
        module, name = definition.module, definition.name
        reader_path = str(new_graph.module_path(reader_module))
        read_by = new_graph.definition(reader_module, reader)
        line = read_by.line if read_by is not None else 0
        return scope.row(
            f"{module}.{name} <- {reader_module}.{reader}", status, reason,
            archs=scope.archs_for(reader_path, scope.new),
            sides=(Side(definition.path, definition.line, ViewName.BASE, Role.CHANGED, name),
                   Side(reader_path, line, scope.view.name, Role.COUNTERPART, reader)),
            evidence=(Hop.of(definition.path, definition.line, Step.DEFINED_AT_BASE, name=name),
                      Hop.of(reader_path, line, Step.READS_IT_FROM,
                             reader=f"{reader_module}.{reader}")),
            details={"name": name, "module": module, "reader": f"{reader_module}.{reader}",
                     **values},
        )

    def _reader_row(self, scope: Scope, new_graph: PythonGraph, definition: Definition,
                    reader: Reader) -> Row | None:
        module, name = definition.module, definition.name
        if reader.module == module and reader.function is not None:
            return None  # a reader in the same module: the surface row covers that file
        reader_path = new_graph.module_path(reader.module)
        if reader_path is None:
            return None  # the reading module is gone too
        top = name.split(".")[0]  # a member is traced by `_member_rows`, never here
        still_bound = new_graph.bindings_to(reader.module, module, top)
        if reader.function is None:
            if not still_bound:
                return None
            status, reason = Status.MISMATCH, Reason.REMOVED_WHILE_STILL_IMPORTED
        else:
            if new_graph.definition(reader.module, reader.function) is None:
                return None
            reads = set(new_graph.reads_of(reader.module, reader.function))
            uses = {r for r in reads if r.split(".")[-1] == name.split(".")[-1] or r == top}
            if not uses:
                return None
            if still_bound or reader.module == module:
                status, reason = Status.MISMATCH, Reason.REMOVED_WHILE_STILL_READ
            else:
                return None
        return scope.row(
            f"{module}.{name} <- {reader.id}", status, reason,
            archs=scope.archs_for(reader_path, scope.new),
            sides=(Side(definition.path, definition.line, ViewName.BASE, Role.CHANGED, name),
                   Side(reader_path, reader.line, scope.view.name, Role.COUNTERPART,
                        reader.function or reader.module)),
            evidence=(Hop.of(definition.path, definition.line, Step.DEFINED_AT_BASE, name=name),
                      Hop.of(reader_path, reader.line, Step.STILL_BOUND_TO,
                             binding=f"{module}.{top}")),
            details={"name": name, "module": module,
                     "reader": ".".join(filter(None, (reader.module, reader.function)))},
        )

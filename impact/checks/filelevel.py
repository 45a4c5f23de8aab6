"""The one file-level comparison shared by the whole-file contracts (surface, build, deps,
dvc, generated-header, sdk-header): did a changed file's content change, and can the tool
understand it at both revisions?

Maintainers: reads facts through the CheckContext only (a blob a partial clone lacks
arrives as a parse-failure fact, so it reads `changed`, never raises). A whole-file
contract is a `FileCheck` that declares its kinds and adds its own judgement through a
`Judge`; the steps every file shares (added, removed, not understood, layout only,
content changed) live here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from impact.checks.base import CheckContext
from impact.checks.check import Check, Scope
from impact.facts import Fact
from impact.kinds import ViewName
from impact.reasons import Reason
from impact.rows import Role, Row, Side, Status
from impact.surface import PathSurface


@dataclass(frozen=True)
class Verdict:
    """What a contract's own judgement settled: a status, its reason and the reason's values."""

    status: Status
    reason: Reason
    details: dict[str, Any]


# A contract's own say on an understood file, given its facts at both revisions; None
# leaves the file to the shared steps (layout only -> inert, else changed).
Judge = Callable[[list[Fact], list[Fact]], Verdict | None]
# A contract's own say on a file added (True) or removed (False); None leaves it changed.
Absent = Callable[[bool], Verdict | None]


class FileCheck(Check):
    """A whole-file contract: one row per changed file it wants (by default, those of the
    kinds it owns, `owns_files`), through `file_row`. A subclass declares its kinds and,
    where it has a say of its own, a `judge` (an understood file whose content changed)
    or an `absent` (a file added or removed)."""

    def rows(self, scope: Scope) -> Iterator[Row]:
        for path in scope.own_paths:
            what = scope.ctx.surface.describe(path)
            if self.wanted(scope, path, what):
                yield file_row(scope, path, what, judge=self.judge(scope, path, what),
                               absent=self.absent(scope, path, what))

    def wanted(self, scope: Scope, path: str, what: PathSurface) -> bool:
        """Whether this changed file gets a row of this contract (default: it is of a kind
        the contract owns)."""
        return what.kind in self.owns_files

    def judge(self, scope: Scope, path: str, what: PathSurface) -> Judge | None:
        """The contract's own say on the file when understood at both revisions (None:
        the shared steps only)."""
        return None

    def absent(self, scope: Scope, path: str, what: PathSurface) -> Absent | None:
        """The contract's own say on the file added or removed (None: `changed`)."""
        return None


def same_content(ctx: CheckContext, old: list[Fact], new: list[Fact]) -> bool:
    """Whether the layout-blind content digests agree (comments and layout do not count)."""
    return ctx.content(old) == ctx.content(new)


def file_row(scope: Scope, path: str, what: PathSurface, judge: Judge | None = None,
             absent: Absent | None = None) -> Row:
    """The row of one changed file: added or removed (or `absent`'s say, when given), not
    understood at either revision, the contract's `judge`, else inert when only layout
    changed and changed otherwise. Every side is a copy of this file, so it is `changed`."""
    ctx, old, new = scope.ctx, scope.old, scope.new
    sides = tuple(Side(path, 0, label, Role.CHANGED)
                  for label, snap in ((ViewName.BASE, old), (scope.view.name, new)) if path in snap)
    archs = scope.archs_for(path)

    def row(status: Status, reason: Reason, **values: Any) -> Row:
        return scope.row(path, status, reason, lane=what.lane, archs=archs,
                         sides=sides, details={"surface": str(what.kind), **values})

    if path not in old or path not in new:
        said = absent(path not in old) if absent is not None else None
        if said is not None:
            return row(said.status, said.reason, **said.details)
        return row(Status.CHANGED, Reason.SURFACE_FILE_ADDED if path not in old
                   else Reason.SURFACE_FILE_REMOVED)
    old_facts, new_facts = ctx.facts(old, path), ctx.facts(new, path)
    broken_new, broken_old = ctx.parse_failure(new_facts), ctx.parse_failure(old_facts)
    if broken_new is not None and broken_old is not None and _same_text(broken_old, broken_new):
        return row(Status.INERT, Reason.ONLY_LAYOUT_CHANGED)
    if broken_new is not None:
        return row(Status.CHANGED, Reason.FILE_NOT_UNDERSTOOD,
                   failure=str(broken_new.data.get("reason", "")))
    if broken_old is not None:
        return row(Status.CHANGED, Reason.FILE_NOT_UNDERSTOOD_AT_BASE)
    said = judge(old_facts, new_facts) if judge is not None else None
    if said is not None:
        return row(said.status, said.reason, **said.details)
    if same_content(ctx, old_facts, new_facts):
        return row(Status.INERT, Reason.ONLY_LAYOUT_CHANGED)
    return row(Status.CHANGED, Reason.CONTENT_CHANGED)


def _same_text(old: Fact, new: Fact) -> bool:
    """Whether two unparsed revisions of a file differ in comments and layout only, as
    the extractor's comment-blind `lexical_digest` (when it records one) says."""
    digest = new.data.get("lexical_digest")
    return digest is not None and old.data.get("lexical_digest") == digest

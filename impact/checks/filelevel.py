"""The one file-level comparison shared by the whole-file contracts (surface, build, deps,
dvc, generated-header, sdk-header): did a changed file's content change, and can the tool
understand it at both revisions?

Maintainers: reads facts through the CheckContext only (a blob a partial clone lacks
arrives as a parse-failure fact, so it reads `changed`, never raises). A contract adds
its own judgement through a `Judge`; the steps every file shares (added, removed, not
understood, layout only, content changed) live here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from impact.checks.base import CheckContext
from impact.facts import Fact
from impact.git import View
from impact.reasons import Reason
from impact.rows import Lane, Role, Row, Side, Status
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


def changed_files(ctx: CheckContext, view: View, kinds: frozenset[str]
                  ) -> Iterator[tuple[str, PathSurface]]:
    """The paths of the view's own change (`own_paths`) whose surface kind is one of
    `kinds`."""
    for path in ctx.own_paths(view):
        what = ctx.surface.describe(path)
        if what.kind in kinds:
            yield path, what


def same_content(ctx: CheckContext, old: list[Fact], new: list[Fact]) -> bool:
    """Whether the layout-blind content digests agree (comments and layout do not count)."""
    return ctx.content(old) == ctx.content(new)


def file_row(ctx: CheckContext, view: View, contract: str, path: str, what: PathSurface,
             judge: Judge | None = None, absent: Absent | None = None) -> Row:
    """The row of one changed file: added or removed (or `absent`'s say, when given), not
    understood at either revision, the contract's `judge`, else inert when only layout
    changed and changed otherwise. Every side is a copy of this file, so it is `changed`."""
    assert view.new is not None
    old, new = view.old, view.new
    sides = tuple(Side(path, 0, label, Role.CHANGED)
                  for label, snap in (("base", old), (view.name, new)) if path in snap)
    archs = ctx.archs_for(path, old, new)

    def row(status: Status, reason: Reason, **values: Any) -> Row:
        return Row(contract=contract, view=view.name, subject=path, status=status,
                   reason=reason, lane=Lane(what.lane), archs=archs, sides=sides,
                   details={"surface": str(what.kind), **values})

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


def file_rows(ctx: CheckContext, contract: str, kinds: frozenset[str]) -> Iterator[Row]:
    """One plain file-level row per changed file of `kinds`, in every available view."""
    for view in ctx.available_views():
        for path, what in changed_files(ctx, view, kinds):
            yield file_row(ctx, view, contract, path, what)

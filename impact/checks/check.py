"""The base every contract check derives from, and the scope it works in.

Maintainers: `Check.check` owns the loop over the views and `Scope.row` the construction
of rows, so a check implements `rows(scope)` for one view and says nothing about views,
contracts or charging. What a check means to the rest of the pipeline (which files it
writes the file-level row of, which kinds it settles, which rows the emit fold may turn
inert, which files it keeps from folding) is declared as class attributes here and read
through `Declarations` — never by importing another check.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from impact.git import Snapshot, View
from impact.kinds import SurfaceKind
from impact.rows import Hop, Lane, Row, Side, Status
from impact.surface import SurfaceMap

if TYPE_CHECKING:
    from impact.checks.base import CheckContext


class Check(abc.ABC):
    """One contract: a stable `name` (the `contract` of its rows) and `rows(scope)`.

    The declarations, read by the pipeline (`Declarations`):

    - `surfaces`: the surface kinds the check reads; a map with none of them skips it
      (None: it applies to every map).
    - `owns_files`: the kinds whose file-level row this check writes under its own name;
      the surface check leaves those files to it.
    - `settles`: the kinds whose stated facts this check judges; a file-level row of such
      a file whose stated facts changed defers to it.
    - `folds`: the kinds whose `changed` rows of this check an emit document that proves
      every family built equal at both revisions may turn inert.
    - `blocks_fold`: whether the files this check's rows name run on the host before
      lowering, so that an equal build proves nothing of them and no row of theirs folds.
    """

    name: ClassVar[str]
    surfaces: ClassVar[frozenset[SurfaceKind] | None] = None
    owns_files: ClassVar[frozenset[SurfaceKind]] = frozenset()
    settles: ClassVar[frozenset[SurfaceKind]] = frozenset()
    folds: ClassVar[frozenset[SurfaceKind]] = frozenset()
    blocks_fold: ClassVar[bool] = False

    def check(self, ctx: CheckContext) -> Iterator[Row]:
        """Every row of this contract, view by view: `rows` for a view that holds both
        snapshots, `unavailable` for one that could not be computed."""
        for view in ctx.views.views:
            scope = Scope(ctx, view, self.name)
            yield from self.rows(scope) if view.new is not None else self.unavailable(scope)

    @abc.abstractmethod
    def rows(self, scope: Scope) -> Iterable[Row]:
        """The rows of this contract in one view that holds both snapshots."""

    def unavailable(self, scope: Scope) -> Iterable[Row]:
        """The rows for a view that could not be computed (`scope.view.unavailable` says
        why); most contracts have none."""
        return ()


def applies(check: Check, surface: SurfaceMap) -> bool:
    """Whether the map has any of the surface kinds `check` reads (a check that names
    none applies to every map)."""
    return check.surfaces is None or bool(
        check.surfaces & {entry.kind for entry in surface.entries})


@dataclass(frozen=True)
class Scope:
    """One check's work on one view: the view's two snapshots, the report's context, and
    rows made under the check's contract and the view's name."""

    ctx: CheckContext
    view: View
    contract: str

    @property
    def old(self) -> Snapshot:
        return self.view.old

    @property
    def new(self) -> Snapshot:
        """The view's new snapshot; `Check.rows` only ever sees views that hold one."""
        new = self.view.new
        if new is None:
            raise ValueError(f"the {self.view.name} view holds no snapshot: "
                             f"{self.view.unavailable}")
        return new

    @property
    def own_paths(self) -> tuple[str, ...]:
        """The changed paths this view's rows start from (`CheckContext.own_paths`)."""
        return self.ctx.own_paths(self.view)

    @property
    def changed(self) -> frozenset[str]:
        """Every path the view changes."""
        return frozenset(self.view.diff.paths)

    def holding(self, path: str) -> Snapshot:
        """The snapshot of the view that holds `path`: the new one, else the old."""
        return self.new if path in self.new else self.old

    def archs_for(self, path: str, *snapshots: Snapshot) -> tuple[str, ...]:
        """The architectures a change to `path` reaches in `snapshots` (default: both)."""
        return self.ctx.archs_for(path, *(snapshots or (self.old, self.new)))

    def row(self, subject: str, status: Status, reason: str, *, lane: Lane = Lane.IMPACT,
            archs: tuple[str, ...] = (), sides: tuple[Side, ...] = (),
            evidence: tuple[Hop, ...] = (), device_test: str = "",
            details: dict[str, Any] | None = None) -> Row:
        """A row of this check's contract in this view."""
        return Row(contract=self.contract, view=self.view.name, subject=subject,
                   status=status, reason=reason, lane=lane, archs=archs, sides=sides,
                   evidence=evidence, device_test=device_test, details=details or {})


class Declarations:
    """What the registered checks declare, gathered for the stages that act on it: the
    surface check (which files another check owns or settles) and the emit fold (which
    rows may fold, which files may not)."""

    def __init__(self, checks: Iterable[Check]) -> None:
        checks = tuple(checks)
        self.owners: dict[SurfaceKind, str] = {
            kind: check.name for check in checks for kind in check.owns_files}
        self.settlers: dict[SurfaceKind, str] = {
            kind: check.name for check in checks for kind in check.settles}
        self.foldable: dict[str, frozenset[SurfaceKind]] = {
            check.name: check.folds for check in checks if check.folds}
        self.fold_blockers: frozenset[str] = frozenset(
            check.name for check in checks if check.blocks_fold)

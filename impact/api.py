"""The library entry: one function per thing `impact` does, keyword arguments in, a result
out. `report` is what `impact report` does; `emit`, `merge_emits`, `read_facts` and
`explain` are the other subcommands. The command line, the demo, the pre-commit hook and
the GitHub Action's entry all call these.

Maintainers: every function takes an optional `Session` (impact/session.py: the caches
and stores reports share; when none is given, the current one, else a fresh one) and
raises `ImpactError`s; a
caller turns them into its own message and exit code. Nothing is decided here: the
verdict and the exit code are impact.rollup's, every word is impact.render's. Importing
this module loads no git reader, check, parser, graph or schema library; a report read
back from the store imports no check (the checks load on a miss only: tests/test_lazy_cli.py,
tests/test_reports_read_fast.py).
"""

from __future__ import annotations

import datetime
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from impact.errors import BadUsage
from impact.session import Session, current_session

if TYPE_CHECKING:
    from impact.git import Views
    from impact.policy import Policy
    from impact.surface import SurfaceMap

PathLike = str | os.PathLike[str]
Progress = Callable[[str | None], None]
"""Hears the name of each stage of a report as it starts; None: the emitter's own bar has
the terminal for a while."""

FORMATS = ("concise", "github", "json", "markdown", "sarif", "text")
"""The names of `impact.render.RENDERERS`, spelled here so that naming a format imports
no renderer; tests/test_lazy_cli.py checks the two agree."""


class Report:
    """One report: `document` is the report as data (`impact.document.build_report`'s, or
    the stored copy of it; `--format json` prints it with its sentences, as the report
    schema describes); the rest reads it, never recomputing what it says."""

    __slots__ = ("document", "policy")

    def __init__(self, document: dict[str, Any], policy: Policy | None = None) -> None:
        self.document = document
        self.policy = policy

    def __repr__(self) -> str:
        return f"<Report {self.verdict['kind']}, {len(self.rows)} rows>"

    @property
    def verdict(self) -> dict[str, Any]:
        """The Runtime impact line as data: its `kind`, `archs` and `exit_code` (decided
        by impact.rollup)."""
        return self.document["verdict"]

    @property
    def exit_code(self) -> int:
        """What `impact report` exits with: 1 BREAKS, 2 NEEDS-DEVICE, 0 otherwise."""
        return int(self.verdict["exit_code"])

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every contract row, sorted, as the JSON report holds them."""
        return self.document["rows"]

    def verdict_line(self) -> str:
        """`Runtime impact: ...`, as the text report and `--quiet` print it."""
        from impact.render.words import verdict_line

        return verdict_line(self.verdict)

    def quiet(self, fmt: str = "text") -> str:
        """What `-q` prints in `fmt`: the verdict alone in that format's own sense (the
        verdict line; for `github`, its verdict annotation); a JSON or SARIF document
        stays whole, since a part of one is no document."""
        if fmt in ("json", "sarif"):
            return self.render(fmt)
        if fmt == "github":
            from impact.render.github import render_github_verdict

            return render_github_verdict(self.document)
        return self.verdict_line() + "\n"

    def render(self, fmt: str = "text", *, verbose: bool = False) -> str:
        """The report in `fmt` (one of FORMATS), importing that renderer alone (the SARIF
        and GitHub ones load the contract registry, which a stored report does not
        otherwise need); `verbose` adds the details to the text format."""
        if fmt == "text":
            from impact.render.text import render_text

            return render_text(self.document, verbose=verbose)
        if fmt == "json":
            from impact.render.json_format import render_json

            return render_json(self.document)
        if fmt not in FORMATS:
            raise BadUsage(f"no report format '{fmt}'", f"use one of: {', '.join(FORMATS)}")
        from impact.render import RENDERERS

        return RENDERERS[fmt](self.document)


def _writable_target(output: PathLike) -> Path:
    target = Path(output)
    if not target.parent.is_dir():
        raise BadUsage(f"cannot write '{output}': its folder does not exist",
                       "create the folder or pick another --output path")
    return target


def write_output(text: str, output: PathLike) -> None:
    """Write `text` to the file `output`, whole or not at all (a temporary file beside it,
    renamed into place); a folder that is missing or cannot be written is BadUsage."""
    target = _writable_target(output)
    if target.is_dir():
        raise BadUsage(f"cannot write '{output}': it is a folder",
                       "name a file to write, e.g. --output report.json")
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError as exc:  # read-only folder, full disk, a folder at the path...
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise BadUsage(f"cannot write '{output}': {exc.strerror or exc}",
                       "free space or pick a writable --output path; nothing was written"
                       ) from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def _silent(_stage: str | None) -> None:
    return None


def _session(given: Session | None) -> Session:
    """The Session a call runs in: the one given, else the current one, else a new one."""
    if given is not None:
        return given
    return current_session() or Session()


def _arguments(**options: str | os.PathLike[str] | bool | None) -> dict[str, str]:
    """The options as the report records them, and as its stored copy is keyed: each one
    given, spelled as given, a switch as "yes"."""
    return {name: "yes" if value is True else str(value)
            for name, value in options.items() if value}


def _views(repo: PathLike, base: str | None, head: str | None, range: str | None,
           commit: str | None, worktree: bool, target_tip: str | None) -> Views:
    from impact.git import open_views

    return open_views(repo, base=base, head=head, range=range, commit=commit,
                      worktree=worktree, target_tip=target_tip)


def report(repo: PathLike = ".", *, base: str | None = None, head: str | None = None,
           range: str | None = None, commit: str | None = None, worktree: bool = False,
           target_tip: str | None = None, surface_map: PathLike | None = None,
           emit: PathLike | None = None, run_emit: bool = False,
           untrusted_head: bool = False, jobs: int | None = None,
           session: Session | None = None, progress: Progress | None = None,
           bar: TextIO | None = None, baseline: PathLike | None = None) -> Report:
    """The report on one change of the repository at `repo`.

    Name the change as `impact report` does: `base` and `head` (a pull request: merge
    base -> head), `range` ("A..B"), `commit` (against its first parent) or `worktree`
    (HEAD against uncommitted work); `target_tip` adds the head merged onto that tip.
    `surface_map` is a built-in map name or a .toml file (default: the repository's
    `.impact/surface.toml` at the base, else the built-in map that fits). `emit` folds an
    emit file `emit()` wrote for these revisions; `run_emit` runs the emitter first (in
    `jobs` sandboxed children, drawing its bar on `bar`); with `untrusted_head` emit
    results never fold a row. `baseline` is a file `audit(..., baseline=...)` wrote: the
    findings it recorded, their copies unchanged, are marked baselined and move no
    verdict. A report asked for again with the same inputs is read back from the
    session's store. `progress` hears each stage.
    """
    from impact.render import words

    session = _session(session)
    stage = progress or _silent
    with session.active():
        if emit and run_emit:
            raise BadUsage("--emit and --run-emit exclude each other",
                           "give a file with --emit, or let --run-emit build one")
        loaded = None
        if baseline:
            from impact.baseline import load as load_baseline

            loaded = load_baseline(baseline)
        stage(words.STAGE_REVISIONS)
        views = _views(repo, base, head, range, commit, worktree, target_tip)
        given = _arguments(base=base, head=head, range=range, commit=commit,
                           target_tip=target_tip, worktree=worktree, surface_map=surface_map,
                           untrusted_head=untrusted_head,
                           baseline=f"{baseline} sha256:{loaded.sha256}" if loaded else None)
        from impact.policy import read_policy
        from impact.surface import map_for_views

        policy = read_policy(views.base)  # the base's: a change does not set its own gate
        surface = map_for_views(str(surface_map) if surface_map else None, views)
        emit_doc, emit_source, emit_sha = None, None, None
        if run_emit:
            _has_emitter(surface, "--run-emit")
        if emit:
            stage(words.STAGE_EMIT_FILE)
            emit_doc, emit_sha = _read_emit(emit, views, surface)
            emit_source = f"file:{emit}"
        elif run_emit:
            from emit.runner import run_emit as run_emitter

            stage(None if bar is not None else words.STAGE_EMITTER)
            emit_doc = run_emitter(views, surface, jobs=jobs, bar=bar,
                                   store=session.emit_store, untrusted_head=untrusted_head)
            emit_source = "run"
        from impact.reportstore import stored_or_built

        def build() -> dict[str, Any]:
            from impact.document import build_report  # only on a miss: a hit imports no check

            stage(words.STAGE_CHECKS)
            return build_report(views, given, surface, emit_doc, emit_source,
                                emit_file_sha256=emit_sha, trust_head=not untrusted_head,
                                caches=session.caches, baseline=loaded,
                                waivers=policy.waivers, today=today)

        today = datetime.date.today()
        # A waiver lapses on a day: a report stored yesterday is not today's.
        keyed = {**given, "waivers-checked-on": today.isoformat()} if policy.waivers else given
        return Report(stored_or_built(session.report_store, views, keyed, surface, build,
                                      emit=emit_doc, emit_file_sha256=emit_sha,
                                      trust_head=not untrusted_head), policy)


def _has_emitter(surface: SurfaceMap, what: str) -> None:
    """Refuse to build kernel variants under a map that names no emitter (aiter's and
    flash-attention's): nothing would be built, and an empty emit file proves nothing."""
    if surface.conventions.emitter is None:
        raise BadUsage(f"the surface map '{surface.name}' has no emitter "
                       f"([conventions.emitter]), so {what} has nothing to build",
                       "its reports need no emit file: run impact report without it")


def _read_emit(emit: PathLike, views: Views, surface: SurfaceMap,
               ) -> tuple[dict[str, Any], str]:
    """The emit document at `emit`, checked against these views' trees, and the sha256 of
    exactly the bytes judged."""
    import hashlib

    from emit.emitfile import load_emit_bytes
    from emit.trees import expected_trees

    try:
        data = Path(emit).read_bytes()
    except OSError as exc:
        raise BadUsage(f"cannot read the emit file '{emit}' ({exc.strerror})",
                       "give the path of an emit file impact emit wrote") from None
    sha = hashlib.sha256(data).hexdigest()
    return load_emit_bytes(data, str(emit), expected_trees(views, surface)), sha


def emit(repo: PathLike = ".", *, output: PathLike, base: str | None = None,
         head: str | None = None, range: str | None = None, commit: str | None = None,
         worktree: bool = False, target_tip: str | None = None,
         surface_map: PathLike | None = None, jobs: int | None = None,
         shard: tuple[int, int] | None = None, timeout: float = 900.0,
         family_budget: float = 20.0, untrusted_head: bool = False,
         session: Session | None = None, bar: TextIO | None = None) -> dict[str, Any]:
    """Build every shipped variant at the base and the head of the change (named as for
    `report`) in sandboxed children, and write the emit file `output` (whole or not at
    all); the emit document. `shard` (K, N) builds slice K of N; `timeout` bounds a child
    in seconds, `family_budget` a family's build in CPU seconds; with `untrusted_head`
    the head's results are neither read from nor written to the cache of built variants.
    """
    from emit.children import Limits
    from emit.emitfile import write_emit_file
    from emit.runner import run_emit
    from impact.surface import map_for_views

    session = _session(session)
    views = _views(repo, base, head, range, commit, worktree, target_tip)
    target = _writable_target(output)
    surface = map_for_views(str(surface_map) if surface_map else None, views)
    _has_emitter(surface, "impact emit")
    store = session.emit_store  # made before the fact store, as `impact emit` always did
    with session.active():
        document = run_emit(views, surface, jobs=jobs,
                            limits=Limits(timeout=timeout, family_budget=family_budget),
                            bar=bar, store=store, untrusted_head=untrusted_head, shard=shard,
                            fact_store=session.fact_store)
    write_emit_file(document, target)
    return document


def merge_emits(slices: Sequence[PathLike], *, output: PathLike) -> dict[str, Any]:
    """Join the files `emit(shard=(K, N))` wrote, every K of 1..N once, into the emit file
    `output`; the joined document."""
    from emit.emitfile import merge_emit_files, write_emit_file

    target = _writable_target(output)
    document = merge_emit_files([str(path) for path in slices])
    write_emit_file(document, target)
    return document


def read_facts(repo: PathLike = ".", *, paths: Sequence[str], rev: str = "HEAD",
               surface_map: PathLike | None = None,
               session: Session | None = None) -> dict[str, Any]:
    """The facts impact reads in `paths` at `rev` (what `impact facts` prints), checked
    against the facts schema."""
    from impact.factsdoc import facts_document

    session = _session(session)
    with session.active():
        return facts_document(str(repo), rev, list(paths),
                              str(surface_map) if surface_map else None, session.caches)


def audit(repo: PathLike = ".", *, rev: str = "HEAD", surface_map: PathLike | None = None,
          baseline: PathLike | None = None, against: PathLike | None = None,
          session: Session | None = None) -> dict[str, Any]:
    """Every contract of `rev` checked against itself (what `impact audit` prints): the
    audit document, its findings the mismatches the tree's copies hold, both sides each.
    `baseline` writes them to that file (whole or not at all) for `report(...,
    baseline=...)` to honour; `against` marks the findings an earlier baseline recorded,
    copies unchanged, as baselined."""
    from impact.baseline import dumps, load
    from impact.treeaudit import audit_tree

    session = _session(session)
    target = _writable_target(baseline) if baseline else None
    earlier = load(against) if against else None
    with session.active():
        document, recorded = audit_tree(repo, rev, surface_map=str(surface_map)
                                        if surface_map else None, against=earlier,
                                        caches=session.caches)
    if target is not None:
        write_output(dumps(recorded), target)
    return document


def queue(repo: PathLike = ".", *, target: str, prs: Sequence[str],
          surface_map: PathLike | None = None, shard: tuple[int, int] | None = None,
          session: Session | None = None) -> dict[str, Any]:
    """The merge queue document (what `impact queue` prints): each pull request of `prs`
    (revisions or ref patterns) merged alone onto `target`, and each pair of them that
    touches a contract subject in common merged together onto it; `shard` (K, N)
    analyses the Kth of every N such pairs (join the N documents with `merge_queues`)."""
    from impact.mergequeue import run_queue

    session = _session(session)
    with session.active():
        return run_queue(repo, target=target, prs=prs, surface_map=str(surface_map)
                         if surface_map else None, shard=shard, caches=session.caches)


def merge_queues(shards: Sequence[PathLike]) -> dict[str, Any]:
    """One queue document from the files `queue(shard=(K, N))` documents were written to,
    every K of 1..N once."""
    import json

    from impact.mergequeue import merge_queues as join

    documents = []
    for path in shards:
        try:
            documents.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise BadUsage(f"cannot read the queue shard '{path}' ({exc})",
                           "give the files impact queue --shard K/N --format json wrote"
                           ) from None
    return join(documents, [str(p) for p in shards])


def waive(repo: PathLike = ".", finding: str = "", *, reason: str,
          expires: datetime.date | None = None, base: str | None = None,
          head: str | None = None, range: str | None = None, commit: str | None = None,
          worktree: bool = False, target_tip: str | None = None,
          surface_map: PathLike | None = None,
          session: Session | None = None) -> tuple[Path, str]:
    """Acknowledge the finding `finding` (its id, as a JSON report's rows carry it under
    `finding`) of the report on the change the other options name (as `report`'s do),
    with `reason`, until `expires` (default: 90 days from today): the waiver, holding the
    digest of the finding's copies now, is written into the work tree's
    `.impact/waivers.toml` (whole or not at all). It takes effect in reports whose base
    holds it: commit it. Returns the file and the finding's subject."""
    from impact.git.repository import open_repository
    from impact.policy import WAIVERS, Waiver, parse_waivers
    from impact.render.findings import findings as grouped
    from impact.render.words import subject_text

    if not reason.strip():
        raise BadUsage("a waiver needs a reason", "say why with --reason \"...\"")
    today = datetime.date.today()
    until = expires or today + datetime.timedelta(days=90)
    if until < today:
        raise BadUsage(f"--expires {until.isoformat()} is in the past", "give a later day")
    root = open_repository(repo)
    if root.repo.bare:
        raise BadUsage(f"'{root.path}' is a bare repository: there is no work tree to write "
                       f"{WAIVERS} into", "run impact waive in a checkout")
    found = report(repo, base=base, head=head, range=range, commit=commit, worktree=worktree,
                   target_tip=target_tip, surface_map=surface_map, session=session)
    rows = [r for r in found.rows if r.get("finding") == finding and r.get("copies")]
    if not rows:
        raise BadUsage(f"no finding {finding!r} in this report", "run impact report "
                       "--format json on the same change; each finding's id is its rows' "
                       "'finding'")
    [one] = [f for f in grouped({"rows": rows[:1]})]
    subject = subject_text(one.subject, one.details, one.sides) or one.subject
    entry = Waiver(finding, reason.strip(), rows[0]["copies"], until, subject)
    target = Path(root.path) / WAIVERS
    kept: list[str] = []
    if target.is_file():
        text = target.read_bytes()
        others = [w for w in parse_waivers(text, str(target)) if w.finding != finding]
        kept = [w.to_toml() for w in others]
    written = "\n".join([*kept, entry.to_toml()])
    parse_waivers(written.encode(), str(target))  # what is written reads back, or nothing is
    target.parent.mkdir(exist_ok=True)
    write_output(written, target)
    return target, subject


def explain(contract: str | None = None) -> str:
    """What the check of `contract` checks, and why (its docstring, dedented); with no
    contract, every contract with the first sentence of what it checks."""
    import difflib
    import inspect

    from impact import checks
    from impact.render.words import contract_list_text

    names = sorted(c.name for c in checks.REGISTRY)
    if contract is None:
        return contract_list_text({c.name: inspect.cleandoc(type(c).__doc__ or "")
                                   for c in checks.REGISTRY})
    text = checks.explain(contract)
    if text is None:
        close = difflib.get_close_matches(contract, names, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise BadUsage(f"no contract named '{contract}'",
                       f"{hint}use one of: {', '.join(names)} ('impact explain' lists them)")
    return inspect.cleandoc(text)


__all__ = ["FORMATS", "Progress", "Report", "Session", "audit", "current_session", "emit",
           "explain", "merge_emits", "merge_queues", "queue", "read_facts", "report",
           "write_output"]

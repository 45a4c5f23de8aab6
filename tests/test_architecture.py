"""The rules of docs/architecture.md that a grep can check, checked on every run.

Each rule keeps one decision in one home: no check reaches into networkx or parses a
node id (pairing and queries live in impact/graph/), no vocabulary value (a surface or
fact kind, a contract, a view name, a descriptor type, a launch kind, a status, a lane, a
role, an outcome, a validation's stage status, severity or verdict...) is spelled as a
string literal outside its enumeration, no hipDNN
path or file name is spelled outside the surface maps, no check reads blob text, and
every sentence of a row lives in impact/render/words/.

Every rule reads the same sources: every module of impact/ (its fixtures aside) and of
emit/, each read and parsed once (`SOURCES`), and the literal rules walk each parse once.
"""

from __future__ import annotations

import ast
import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

import pytest

from emit.child.vocabulary import BuildStatus, EnumeratedBy, RunStatus, TableStatus
from impact.checks import REGISTRY
from impact.kinds import DescriptorType, FactKind, InputForm, LaunchKind, SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.render.words import REASONS, STEPS, fields_of
from impact.rollup import Outcome, PackOutcome
from impact.rows import Confirms, FindingStatus, Lane, Role, Status
from impact.validate.perf import PerfStatus
from impact.validate.verdict import Severity, StageStatus, Verdict
from impact.validate.verify import VerifyVerdict

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Source:
    """One module, read once and parsed once for every rule; `rel` is its path from the
    repository's root."""

    rel: str
    text: str

    @classmethod
    def read(cls, path: Path) -> Source:
        return cls(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))

    @property
    def name(self) -> PurePosixPath:
        return PurePosixPath(self.rel)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @cached_property
    def nodes(self) -> list[ast.AST]:
        return list(ast.walk(ast.parse(self.text)))

    def under(self, *folders: str) -> bool:
        return any(self.rel.startswith(folder.rstrip("/") + "/") for folder in folders)


SOURCES = tuple(Source.read(p) for top in ("impact", "emit")
                for p in sorted((ROOT / top).rglob("*.py")) if "fixtures" not in p.parts)


def _only(*folders: str) -> list[Source]:
    return [s for s in SOURCES if s.under(*folders)]


def _named(*paths: str) -> list[Source]:
    return [s for s in SOURCES if s.rel in paths]


def _grep(pattern: str, sources: Iterable[Source]) -> list[str]:
    rx = re.compile(pattern)
    return [f"{s.rel}:{n}: {line.strip()}" for s in sources
            for n, line in enumerate(s.lines, 1) if rx.search(line)]


def test_the_rules_read_both_packages() -> None:
    assert _only("emit") and _only("impact") and not _only("impact/fixtures")


def test_only_the_graph_touches_networkx() -> None:
    others = [s for s in SOURCES if not s.under("impact/graph")]
    assert _grep(r"\bgraph\.graph\b|\.graph\.nodes|\bout_edges\(|\bin_edges\(", others) == []
    assert _grep(r"^import networkx|^from networkx", others) == []


def test_no_check_parses_node_ids() -> None:
    assert _grep(r"split\(\":\"|removeprefix\(\"(cpplist|launch|variant|py|module):|"
                 r"f\"(py|cpplist|launch|variant|module):", _only("impact/checks")) == []


# --- no vocabulary value spelled as a literal ------------------------------------------

def _vocabulary(hints: tuple[str, ...], *members: Iterable[enum.StrEnum | str]
                ) -> tuple[tuple[str, ...], frozenset[str]]:
    return hints, frozenset(str(m) for group in members for m in group)


VOCABULARIES = {
    "surface or fact kind, or contract": _vocabulary(
        ("kind", "contract"), SurfaceKind, FactKind, [c.name for c in REGISTRY]),
    "view name": _vocabulary(("view", "revision", "label"), ViewName),
    "descriptor type": _vocabulary(("descriptor", "type", "kind"), DescriptorType),
    "launch kind": _vocabulary(("kind", "launch"), LaunchKind),
    "status": _vocabulary(("status",), Status, FindingStatus, RunStatus, BuildStatus,
                          TableStatus, StageStatus, PerfStatus),
    "lane": _vocabulary(("lane",), Lane),
    "role": _vocabulary(("role",), Role),
    "outcome": _vocabulary(("kind", "verdict", "outcome"), Outcome, PackOutcome, Verdict,
                           VerifyVerdict),
    "severity": _vocabulary(("severit",), Severity),
    "purpose of a device run": _vocabulary(("confirms",), Confirms),
    "enumeration source": _vocabulary(("enumerat",), EnumeratedBy),
    "input form": _vocabulary(("form",), InputForm),
}
"""Each vocabulary: the words that name it in code (a compared expression's text holds
one) and its values."""

_VIEW_NAMES = VOCABULARIES["view name"][1]
_TAKES_A_VIEW_NAME = {"view", "relabelled", "View", "Side"}
"""Calls whose arguments are view names: `views.view(...)`, `snap.relabelled(...)`, the
`View(...)` and `Side(...)` constructors."""


def _literals(node: ast.AST) -> list[ast.Constant]:
    """`node` itself when it is a string constant, or the string constants it lists."""
    elements = node.elts if isinstance(node, ast.Tuple | ast.Set | ast.List) else [node]
    return [e for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _comparisons(source: Source, node: ast.Compare) -> list[str]:
    """`x.kind == "literal"`, `status in ("a", "b")`, `row["lane"] != "..."` and friends."""
    operands = (node.left, *node.comparators)
    text = " ".join(ast.unparse(o) for o in operands if not _literals(o)).lower()
    found = []
    for name, (hints, values) in VOCABULARIES.items():
        if not any(hint in text for hint in hints):
            continue  # `func.attr.value == "param"` names a method, not a kind
        found += [f"{source.rel}:{node.lineno}: {c.value!r} ({name})"
                  for o in operands for c in _literals(o) if c.value in values]
    return found


def _view_name_uses(source: Source, node: ast.AST) -> list[str]:
    """A view name passed where one is taken, or looked up in a table of revisions:
    `views.view("merged")`, `Side(..., "base", ...)`, `revisions["head"]`,
    `views.revisions.get("base")`."""
    constants: list[ast.Constant] = []
    if isinstance(node, ast.Call):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        target = ast.unparse(func)
        if called in _TAKES_A_VIEW_NAME or (called == "get" and "revisions" in target):
            constants = [c for arg in node.args for c in _literals(arg)]
    elif isinstance(node, ast.Subscript):
        target = ast.unparse(node.value)
        if "revisions" in target or "sides" in target or "outcomes" in target:
            constants = _literals(node.slice)
    return [f"{source.rel}:{node.lineno}: {c.value!r} (view name)"
            for c in constants if c.value in _VIEW_NAMES]


def _literal_uses(source: Source) -> list[str]:
    found = []
    for node in source.nodes:
        if isinstance(node, ast.Compare):
            found += _comparisons(source, node)
        found += _view_name_uses(source, node)
    return found


LITERAL_USES = [hit for source in SOURCES for hit in _literal_uses(source)]
"""Every literal use of a vocabulary value in impact/ and emit/: one walk of each parse."""


def test_no_vocabulary_literal_outside_its_enum() -> None:
    assert LITERAL_USES == []


def test_the_literal_rule_sees_what_it_forbids() -> None:
    """The rule itself can fail: each kind of use it forbids is found in a sample."""
    code = ('if row.view != "merged" and status == "done" and lane in ("IMPACT",):\n'
            '    views.view("head"), Side(f, 0, "base", r), revisions["target_tip"]\n'
            'if kind == "rocke" or descriptor_type(p) == "kdp" or verdict["kind"] == "N/A":\n'
            '    pass\n')
    hits = _literal_uses(Source("sample.py", code))
    for value in ("merged", "done", "IMPACT", "head", "base", "target_tip", "rocke", "kdp",
                  "N/A"):
        assert any(repr(value) in hit for hit in hits), (value, hits)


def test_no_hipdnn_path_outside_the_maps() -> None:
    pattern = (r"dnn-providers|hip-kernel-provider|projects/hipdnn|IngestorPacks|"
               r"\"/packs/\"|Native\.cpp\"|rocke/helpers|rocke/runtime|rocke\.core\.ir")
    hits = [h for h in _grep(pattern, SOURCES) if '"""' not in h and not h.split(": ", 1)[1]
            .startswith(("#", "`", "\""))]
    assert hits == []


def test_checks_never_read_blob_text() -> None:
    assert _grep(r"\.read\(", _only("impact/checks")) == []


def test_every_reason_and_step_has_words_and_no_words_are_orphans() -> None:
    assert set(REASONS) == set(Reason)
    assert set(STEPS) == set(Step)


@pytest.mark.parametrize("template", [*REASONS.values(), *STEPS.values()])
def test_templates_are_well_formed(template: str) -> None:
    fields_of(template)  # raises on a malformed template


def test_every_contract_has_one_registry_entry() -> None:
    names = [c.name for c in REGISTRY]
    assert len(names) == len(set(names))


_CHECK_SHARED = {"__init__.py", "base.py", "check.py", "filelevel.py"}
"""The check package's shared modules: the registry, the context, the `Check` base and the
file-level comparison. Every other module is one contract."""


def _contract_modules() -> list[Source]:
    return [s for s in _only("impact/checks") if s.name.name not in _CHECK_SHARED]


def test_no_check_iterates_views_or_builds_rows_itself() -> None:
    """`Check.check` owns the loop over the views and `Scope.row` the rows: a contract
    module neither walks the views nor spells a Row, and asserts nothing about them."""
    modules = [*_contract_modules(), *_named("impact/checks/filelevel.py")]
    assert _grep(r"available_views\(|views\.views\b|\bfor view in\b|\bRow\(|"
                 r"assert view\.new", modules) == []


def test_no_check_imports_another() -> None:
    """What one check means to another (owned kinds, settled kinds, folding) travels
    through the declarations, never through an import."""
    names = {s.name.stem for s in _contract_modules()}
    pattern = r"^from impact\.checks\.(" + "|".join(sorted(names)) + r") import"
    assert _grep(pattern, _contract_modules()) == []


def test_every_registered_check_derives_from_the_base() -> None:
    from impact.checks import Check

    assert all(isinstance(check, Check) for check in REGISTRY)


def test_the_fold_names_no_check() -> None:
    """The fold reads what a check declares it may fold or keeps from folding."""
    names = "|".join(type(c).__name__ for c in REGISTRY)
    assert _grep(rf"\b({names})\b|from impact\.checks\.(?!base\b)\w+ import",
                 _named("impact/fold.py")) == []

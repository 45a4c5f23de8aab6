"""The rules of docs/architecture.md that a grep can check, checked on every run.

Each rule keeps one decision in one home: no check reaches into networkx or parses a
node id (pairing and queries live in impact/graph/), no kind is spelled as a string
literal outside its enumeration (impact/kinds.py, impact/rows.py, impact/reasons.py),
no hipDNN path or file name is spelled outside the surface maps, no check reads blob
text, and every sentence of a row lives in impact/render/words.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from impact.checks import REGISTRY
from impact.kinds import FactKind, SurfaceKind
from impact.reasons import Reason, Step
from impact.render.words import REASONS, STEPS, fields_of

ROOT = Path(__file__).resolve().parent.parent
CODE = sorted(p for p in (ROOT / "impact").rglob("*.py") if "fixtures" not in p.parts)


def _grep(pattern: str, paths: list[Path]) -> list[str]:
    rx = re.compile(pattern)
    return [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in paths
            for n, line in enumerate(p.read_text().splitlines(), 1) if rx.search(line)]


def test_only_the_graph_touches_networkx() -> None:
    others = [p for p in CODE if "graph" not in p.relative_to(ROOT).parts[:2]]
    assert _grep(r"\bgraph\.graph\b|\.graph\.nodes|\bout_edges\(|\bin_edges\(", others) == []
    assert _grep(r"^import networkx|^from networkx", others) == []


def test_no_check_parses_node_ids() -> None:
    checks = sorted((ROOT / "impact" / "checks").glob("*.py"))
    assert _grep(r"split\(\":\"|removeprefix\(\"(cpplist|launch|variant|py|module):|"
                 r"f\"(py|cpplist|launch|variant|module):", checks) == []


_KIND_VALUES = {str(k) for k in (*SurfaceKind, *FactKind)} | {c.name for c in REGISTRY}


def _literal_kind_comparisons(path: Path) -> list[str]:
    """`x.kind == "literal"`, `kind in ("a", "b")`, `row["contract"] == "..."` and friends,
    where a literal is a surface or fact kind or a contract name."""
    found = []
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = (node.left, *node.comparators)
        text = " ".join(ast.get_source_segment(source, o) or "" for o in operands
                        if not isinstance(o, ast.Constant | ast.Tuple | ast.Set | ast.List))
        if "kind" not in text and "contract" not in text:
            continue  # `func.attr.value == "param"` names a method, not a kind
        for operand in operands:
            values = [operand] if isinstance(operand, ast.Constant) else (
                list(operand.elts) if isinstance(operand, ast.Tuple | ast.Set | ast.List) else [])
            for value in values:
                if isinstance(value, ast.Constant) and value.value in _KIND_VALUES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {value.value!r}")
    return found


def test_no_kind_literal_outside_its_enum() -> None:
    found = [hit for p in CODE for hit in _literal_kind_comparisons(p)]
    assert found == []


def test_no_hipdnn_path_outside_the_maps() -> None:
    pattern = (r"dnn-providers|hip-kernel-provider|projects/hipdnn|IngestorPacks|"
               r"\"/packs/\"|Native\.cpp\"|rocke/helpers|rocke/runtime|rocke\.core\.ir")
    code = [p for p in CODE if p.suffix == ".py"]
    hits = [h for h in _grep(pattern, code) if '"""' not in h and not h.split(": ", 1)[1]
            .startswith(("#", "`", "\""))]
    assert hits == []


def test_checks_never_read_blob_text() -> None:
    checks = sorted((ROOT / "impact" / "checks").glob("*.py"))
    assert _grep(r"\.read\(", checks) == []


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


def _contract_modules() -> list[Path]:
    return sorted(p for p in (ROOT / "impact" / "checks").glob("*.py")
                  if p.name not in _CHECK_SHARED)


def test_no_check_iterates_views_or_builds_rows_itself() -> None:
    """`Check.check` owns the loop over the views and `Scope.row` the rows: a contract
    module neither walks the views nor spells a Row, and asserts nothing about them."""
    modules = [*_contract_modules(), ROOT / "impact" / "checks" / "filelevel.py"]
    assert _grep(r"available_views\(|views\.views\b|\bfor view in\b|\bRow\(|"
                 r"assert view\.new", modules) == []


def test_no_check_imports_another() -> None:
    """What one check means to another (owned kinds, settled kinds, folding) travels
    through the declarations, never through an import."""
    names = {p.stem for p in _contract_modules()}
    pattern = r"^from impact\.checks\.(" + "|".join(sorted(names)) + r") import"
    assert _grep(pattern, _contract_modules()) == []


def test_every_registered_check_derives_from_the_base() -> None:
    from impact.checks import Check

    assert all(isinstance(check, Check) for check in REGISTRY)


def test_the_fold_names_no_check() -> None:
    """The fold reads what a check declares it may fold or keeps from folding."""
    names = "|".join(type(c).__name__ for c in REGISTRY)
    assert _grep(rf"\b({names})\b|from impact\.checks\.(?!base\b)\w+ import",
                 [ROOT / "impact" / "fold.py"]) == []

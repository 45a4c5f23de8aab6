"""Findings group a problem's rows across views, most severe first."""

from __future__ import annotations

from impact.reasons import Reason
from impact.render.findings import findings
from impact.rows import Role, Row, Side, Status


def _row(view: str, status: Status = Status.MISMATCH, subject: str = "p.cpp:kArgs",
         archs: tuple[str, ...] = ("gfx950",)) -> dict:
    return Row("kernargs", view, subject, status, Reason.ARGUMENT_ORDER_DIFFERS, archs=archs,
               sides=(Side("p.cpp", 9, view, Role.COUNTERPART),
                      Side("k.py", 3, view, Role.CHANGED))).to_json()


def test_a_problem_seen_in_two_views_is_one_finding_naming_both() -> None:
    report = {"rows": [_row("merged", archs=("gfx942",)), _row("head"),
                       _row("head", Status.CHANGED, "other.py")]}
    first, second = findings(report)
    assert (first.status, first.views, first.archs) == ("mismatch", ("head", "merged"),
                                                        ("gfx942", "gfx950"))
    assert [s["file"] for s in first.sides] == ["k.py", "p.cpp"] and first.traced
    assert (second.status, second.views) == ("changed", ("head",))


def test_different_problems_stay_apart() -> None:
    assert len(findings({"rows": [_row("head"), _row("head", subject="q.cpp:kArgs")]})) == 2


def test_a_subject_changed_in_two_views_is_one_device_run_on_the_union_of_archs() -> None:
    from impact.document import device_runs

    rows = [Row("surface", view, "k.py", Status.CHANGED, Reason.CONTENT_CHANGED, archs=archs,
                sides=(Side("k.py", 0, view, Role.CHANGED),))
            for view, archs in (("head", ("gfx950",)), ("merged", ("gfx942", "gfx950")))]
    [run] = device_runs(rows)
    assert (run["archs"], run["target"], run["subjects"]) == (["gfx942", "gfx950"], "", ["k.py"])
    assert len(run["rows"]) == 2

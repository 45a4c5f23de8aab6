"""The scenario tables of the three hipDNN/rocKE fixture trees, run through `impact`.

One line per tree: how many breaks read BREAKS naming both sides as file:line, how many
pure refactors read NONE with --run-emit, how many no-op edits give zero mismatch rows,
and the false NONE and false BREAKS counts; then every row that misses. The tables:

    rocke_tree     the first tree's named edits (impact/fixtures/edits.py), its cosmetic
                   edits (tests/test_verdicts.py) and its builder refactors
                   (tests/test_emit_settles_builder.py)
    rocke_tree_b   impact/fixtures/scenarios_b.py
    rocke_tree_c   impact/fixtures/scenarios_c.py

Each row is a fresh scenario repository (base -> head) reported through impact.api, as
the tests do. Run:

    PYTHONPATH=. python benchmarks/trees.py [--tree rocke_tree_c] [--no-emit] [--json F]

Exit status: 0 when no row misses, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from impact import api
from impact.fixtures import Change, Scenario, build_repository
from impact.fixtures.tree import tree_files

BREAKS, NONE = "BREAKS", "NONE"
TESTS = Path(__file__).resolve().parents[1] / "tests"


@dataclass(frozen=True)
class Row:
    name: str
    head: tuple
    expect: str
    sides: tuple[str, ...] = ()
    emitted: str | None = None
    noop: bool = False


@dataclass
class Outcome:
    name: str
    expect: str
    said: str
    emitted_expect: str | None = None
    emitted_said: str | None = None
    mismatch_rows: int = 0
    both_sides: bool = True
    misses: list[str] = field(default_factory=list)


def table_a() -> list[Row]:
    from impact.fixtures import edits as e

    sys.path.insert(0, str(TESTS))
    import test_emit_settles_builder as settles  # the first tree's refactor table
    import test_verdicts as verdicts  # the first tree's cosmetic edits

    rows = [
        Row("builder gains an argument", (e.add_builder_param(e.GFX950_DENSE, "dropout_seed",
                                                              "I32"),),
            BREAKS, (e.GFX950_DENSE, e.GFX950_DENSE_PACK)),
        Row("launch() drops an argument", (e.drop_launch_argument(e.GFX950_DENSE_PACK,
                                                                  "seqlenKv"),),
            BREAKS, (e.GFX950_DENSE_PACK, e.GFX950_DENSE)),
        Row("old-era launch() gains an argument", (e.add_launch_argument(e.GFX942_DENSE_PACK,
                                                                         "batch"),),
            BREAKS, (e.GFX942_DENSE_PACK, e.GFX942_DENSE)),
        Row("pack list gains an argument", (e.add_pack_argument(e.GFX950_DENSE_PACK,
                                                                "dropout_seed"),),
            BREAKS, (e.GFX950_DENSE_PACK, e.GFX950_DENSE)),
    ]
    rows += [Row(f"builder refactor: {name}", (edit,), "NEEDS-DEVICE gfx950", emitted=NONE)
             for name, edit in settles.REFACTORS.items()]
    rows += [Row(f"cosmetic {i}", (edit,), NONE, noop=True)
             for i, edit in enumerate(verdicts.COSMETIC)]
    return rows


def _from_cases(cases) -> list[Row]:
    return [Row(c.name, tuple(c.head), c.expect, tuple(c.sides), c.emitted,
                noop=c.name.startswith("cosmetic")) for c in cases]


def table_b() -> list[Row]:
    from impact.fixtures import scenarios_b
    return _from_cases(scenarios_b.CASES)


def table_c() -> list[Row]:
    from impact.fixtures import scenarios_c
    return _from_cases(scenarios_c.CASES)


TABLES = {"rocke_tree": table_a, "rocke_tree_b": table_b, "rocke_tree_c": table_c}


def _verdict(doc: dict) -> str:
    return doc["verdict"]["line"].removeprefix("Runtime impact: ")


def _mismatches(doc: dict, ignore: set[str], *, preexisting: bool = False) -> list[dict]:
    return [r for r in doc["rows"] if r["status"] == "mismatch"
            and (preexisting or not r["preexisting"]) and r["subject"] not in ignore]


def _named(doc: dict, files: tuple[str, ...], ignore: set[str]) -> bool:
    for row in _mismatches(doc, ignore):
        if row["view"] != "head":
            continue
        named = {s["file"] for s in row["sides"] if isinstance(s.get("line"), int)}
        if set(files) <= named:
            return True
    return False


class Runner:
    def __init__(self, tree: str, root: Path) -> None:
        self.tree = tree
        self.files = tree_files(tree)
        self.root = root
        self.count = 0

    def report(self, edits: tuple, **options) -> dict:
        path = self.root / f"{self.tree}-{self.count}"
        self.count += 1
        build_repository(Scenario(base=self.files, head=(Change("head", edits=edits),)), path)
        found = api.report(str(path), base="base", head="head", **options)
        return json.loads(found.render("json"))


def run_tree(tree: str, root: Path, *, with_emit: bool) -> tuple[dict, list[Outcome]]:
    runner = Runner(tree, root)
    rows = TABLES[tree]()
    # A consistent tree: what a change on no contract reports as mismatched is a false alarm.
    noop = next((r for r in rows if r.noop), None)
    alarms = ({m["subject"] for m in _mismatches(runner.report(noop.head), set(), preexisting=True)}
              if noop else set())
    out = []
    for row in rows:
        doc = runner.report(row.head)
        got = Outcome(row.name, row.expect, _verdict(doc),
                      mismatch_rows=len(_mismatches(doc, set(), preexisting=True)))
        if row.expect == BREAKS:
            got.both_sides = _named(doc, row.sides, alarms)
            if got.said != BREAKS:
                got.misses.append(f"reads {got.said}")
            elif not got.both_sides:
                got.misses.append("BREAKS without both sides as file:line")
        elif got.said != row.expect:
            got.misses.append(f"reads {got.said}, not {row.expect}")
        if row.noop and got.mismatch_rows:
            got.misses.append(f"{got.mismatch_rows} mismatch rows on a no-op")
        if row.emitted and with_emit:
            got.emitted_expect = row.emitted
            got.emitted_said = _verdict(runner.report(row.head, run_emit=True))
            if got.emitted_said != row.emitted:
                got.misses.append(f"with --run-emit reads {got.emitted_said}, not {row.emitted}")
        out.append(got)
    breaks = [o for o in out if o.expect == BREAKS]
    refactors = [o for o in out if o.emitted_expect == NONE]
    noops = [r.name for r in rows if r.noop]
    summary = {
        "tree": tree,
        "alarms_on_a_noop": sorted(alarms),
        "breaks": (sum(o.said == BREAKS and o.both_sides for o in breaks), len(breaks)),
        "refactors": (sum(o.emitted_said == NONE for o in refactors), len(refactors)),
        "noops": (sum(o.mismatch_rows == 0 for o in out if o.name in noops), len(noops)),
        "false_none": sum(o.said == NONE and o.expect != NONE for o in out)
        + sum(o.emitted_said == NONE and o.emitted_expect != NONE for o in out),
        "false_breaks": sum(o.said == BREAKS and o.expect != BREAKS for o in out),
    }
    return summary, out


def line(summary: dict, *, with_emit: bool) -> str:
    refactors = "{}/{}".format(*summary["refactors"]) if with_emit else "not run"
    return (f"{summary['tree']}: breaks BREAKS {summary['breaks'][0]}/{summary['breaks'][1]}, "
            f"refactors NONE with --run-emit {refactors}, "
            f"no-ops with zero mismatch rows {summary['noops'][0]}/{summary['noops'][1]}, "
            f"false NONE {summary['false_none']}, false BREAKS {summary['false_breaks']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", choices=sorted(TABLES))
    parser.add_argument("--no-emit", action="store_true", help="skip the --run-emit rows")
    parser.add_argument("--json", help="write every outcome here")
    args = parser.parse_args(argv)
    trees = args.tree or list(TABLES)
    missed, record = False, {}
    with tempfile.TemporaryDirectory(prefix="impact-trees-") as tmp:
        for tree in trees:
            summary, outcomes = run_tree(tree, Path(tmp), with_emit=not args.no_emit)
            print(line(summary, with_emit=not args.no_emit), flush=True)
            for o in outcomes:
                if o.misses:
                    missed = True
                    print(f"  miss: {o.name}: {'; '.join(o.misses)}", flush=True)
            record[tree] = {"summary": summary, "rows": [asdict(o) for o in outcomes]}
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

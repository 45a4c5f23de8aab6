"""The emit fold settles a launch-surface row whose host side is a shipped builder.

A refactor of `build_attention_dense`'s body (locals renamed, keywords reordered, a
`b.param` moved into a `with` block) changes the code the profile's `kernel_arguments`
and `positional_launch` entries name; the emitter builds every shipped variant at both
revisions with equal arguments, IR and compiler inputs, and that proof settles both rows
(`impact.rows.SETTLED_BY_BUILD`). Fail closed: a variant not built, an IR that differs, an
untrusted head, or a changed helper that host-side code also runs keeps the row changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import emit, report, verdict

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
DENSE = e.GFX950_DENSE
PROFILE = "projects/hipdnn/tools/IngestorGenerator/configs/gfx950_attention_dense.profile.yaml"
ENTRIES = {f"{PROFILE}:kernel_arguments", f"{PROFILE}:positional_launch"}
Q = '    q = b.param("q_ptr", PtrType(elem), noalias=True, readonly=True, align=16)\n'
SCALE = '    scale = b.param("scale", F32)\n    batch = b.param("batch", I32)\n'

PTRS = ('    q = b.param("q_ptr", PtrType(elem), noalias=True, readonly=True, align=16)\n'
        '    k = b.param("k_ptr", PtrType(elem), noalias=True, readonly=True, align=16)\n'
        '    v = b.param("v_ptr", PtrType(elem), noalias=True, readonly=True, align=16)\n')
INPUT = 'b.param(n, PtrType(elem), noalias=True, readonly=True, align=16)'
NAMES = '("q_ptr", "k_ptr", "v_ptr")'


def _with_helper(helper: str):
    """The three input pointers declared by `_inputs(b, elem)`, written as `helper`."""
    def edit(files):
        e.replace(DENSE, PTRS, "    q, k, v = _inputs(b, elem)\n")(files)
        e.replace(DENSE, "def build_attention_dense(",
                  helper + "\n\ndef build_attention_dense(")(files)
    return edit


REFACTORS = {
    "locals renamed": e.replace(DENSE, SCALE, '    sm_scale = b.param("scale", F32)\n'
                                '    scale = sm_scale\n    batch = b.param("batch", I32)\n'),
    "keywords reordered": e.replace(DENSE, Q, '    q = b.param("q_ptr", PtrType(elem), '
                                    'align=16, readonly=True, noalias=True)\n'),
    "b.param in a with block": e.replace(DENSE, Q, '    with b.scope("inputs"):\n    ' + Q),
    "list comprehension": e.replace(DENSE, PTRS, f"    q, k, v = [{INPUT} for n in {NAMES}]\n"),
    "helper extracted": _with_helper(
        "def _inputs(b, elem):\n" + PTRS + "    return q, k, v\n"),
    "helper with a generator": _with_helper(
        f"def _inputs(b, elem):\n    return tuple({INPUT} for n in {NAMES})\n"),
}
# Spellings the static reader cannot place the arguments of: never compared, never BREAKS.
UNREAD = ("list comprehension", "helper extracted", "helper with a generator")


def _repo(build, *edits):
    return build(Scenario(base=TREE, head=(Change("refactor", edits=edits),)))


def _entry_rows(doc: dict) -> dict[str, str]:
    return {r["subject"]: r["status"] for r in doc["rows"]
            if r["contract"] == "launch-surface" and r["view"] == "head"}


def _doctored(path: Path, out: Path, change) -> str:
    document = json.loads(path.read_text())
    change(document["revisions"]["head"]["result"]["families"])
    out.write_text(json.dumps(document))
    return str(out)


def _dense_950(families: list[dict]) -> dict:
    return next(f for f in families if f["source"] == "kernels.gfx950.attention_dense")


def test_a_builder_refactor_folds_and_every_unsure_path_keeps_the_row(build, tmp_path) -> None:
    repo = _repo(build, REFACTORS["locals renamed"])
    assert verdict(report(repo)) == "NEEDS-DEVICE gfx950"
    out = tmp_path / "emit.json"
    emit(repo, out)
    folded = report(repo, emit=str(out))
    assert _entry_rows(folded) == dict.fromkeys(ENTRIES, "inert")
    assert verdict(folded) == "NONE"

    def unbuilt(families):
        _dense_950(families)["variants"][0]["status"] = "failed"

    def other_ir(families):
        kernel = _dense_950(families)["variants"][-1]["kernels"][0]
        kernel["ir_sha256"] = "0" * 64

    def crashed(families):
        _dense_950(families)["status"] = "failed"

    for name, change in (("unbuilt", unbuilt), ("other IR", other_ir), ("crashed", crashed)):
        doc = report(repo, emit=_doctored(out, tmp_path / f"{name}.json", change))
        assert _entry_rows(doc) == dict.fromkeys(ENTRIES, "changed"), name
        assert verdict(doc) == "NEEDS-DEVICE gfx950", name
    untrusted = report(repo, emit=str(out), untrusted_head=True)
    assert _entry_rows(untrusted) == dict.fromkeys(ENTRIES, "changed")
    assert verdict(untrusted) == "NEEDS-DEVICE gfx950"


@pytest.mark.slow  # children spawned
@pytest.mark.parametrize("name", [n for n in REFACTORS if n != "locals renamed"])
def test_each_refactor_folds_to_none(build, name: str) -> None:
    doc = report(_repo(build, REFACTORS[name]), run_emit=True)
    assert _entry_rows(doc) == dict.fromkeys(ENTRIES, "inert")
    assert verdict(doc) == "NONE"


@pytest.mark.parametrize("name", UNREAD)
def test_arguments_the_reader_cannot_place_are_never_compared(build, name: str) -> None:
    """Without an emit file: each copy's row is `changed`, naming the construct; no
    mismatch (the reader must not take three pointers it cannot see as removed)."""
    doc = report(_repo(build, REFACTORS[name]))
    kernargs = [r for r in doc["rows"] if r["contract"] == "kernargs" and r["view"] == "head"]
    assert kernargs and {r["status"] for r in kernargs} == {"changed"}
    assert {r["reason"] for r in kernargs} == {"builder-arguments-not-read"}
    assert verdict(doc) == "NEEDS-DEVICE gfx950"


def test_a_helper_host_code_also_runs_keeps_its_rows(build) -> None:
    """`_has_shape_params` runs in `attention_dense_signature` (host side: the
    `optional_arguments` entry, no C++ mirror); the head makes the builder read it too and
    rewrites it. The build proves the builder's half only, so the builder's entries stay
    changed: the helper can run through a definition no family builds."""
    helper = e.replace(DENSE, "    return not spec.persistent\n",
                       "    persistent = spec.persistent\n    return not persistent\n")
    reader = e.replace(DENSE, "    if spec.persistent:\n"
                       "        return _build_attention_dense_persistent",
                       "    if not _has_shape_params(spec):\n"
                       "        return _build_attention_dense_persistent")
    doc = report(_repo(build, helper, reader), run_emit=True)
    rows = _entry_rows(doc)
    assert rows[f"{PROFILE}:kernel_arguments"] == "changed"
    assert rows[f"{PROFILE}:positional_launch"] == "changed"
    assert verdict(doc).startswith("NEEDS-DEVICE")

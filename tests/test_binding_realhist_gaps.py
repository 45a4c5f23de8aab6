"""Gaps left by the first real-history pass, each on a tree written here for the test:
a submodule pointer bump (a gitlink, not a file) is on the surface, and two extension
modules that each bind an op called `fwd` (FlashAttention-2's pybind module and
FlashAttention-3's TORCH_LIBRARY namespace) are two ops, never one."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.index import commit_tree
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
from harness import charged_rows, report, scenario

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files

GITLINK = 0o160000
# Each test reads its trees in a Session of its own: no blob read before.
pytestmark = pytest.mark.usefixtures("fresh_session")


# -- a submodule pointer ------------------------------------------------------------------


def _commit(store: Repo, files: dict[str, bytes], links: dict[str, str],
            parents: list[bytes], message: str) -> bytes:
    """A commit of `files` (blobs) and `links` (gitlinks: path -> the submodule's commit)."""
    items = []
    for path, data in sorted(files.items()):
        blob = Blob.from_string(data)
        store.object_store.add_object(blob)
        items.append((path.encode(), blob.id, 0o100644))
    items += [(path.encode(), sha.encode(), GITLINK) for path, sha in sorted(links.items())]
    commit = Commit()
    commit.tree = commit_tree(store.object_store, items)
    commit.parents = parents
    commit.author = commit.committer = b"gaps <gaps@example.invalid>"
    commit.author_time = commit.commit_time = 1_700_000_000 + len(parents)
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode() + b"\n"
    store.object_store.add_object(commit)
    return commit.id


def _pointer_bump(root: Path, files: dict[str, bytes], path: str) -> Path:
    """A repository whose newest commit moves the gitlink at `path` and nothing else."""
    root.mkdir()
    store = Repo.init(str(root))
    first = _commit(store, files, {path: "a" * 40}, [], "pin the library")
    second = _commit(store, files, {path: "b" * 40}, [first], "bump the library")
    store.refs[b"refs/heads/main"] = second
    store.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    return root


@pytest.mark.parametrize(("tree", "path"), [
    ("aiter_tree", "3rdparty/composable_kernel"),
    ("flash_attention_tree", "csrc/composable_kernel"),
    ("flash_attention_tree", "csrc/cutlass"),
])
def test_a_submodule_pointer_bump_reads_changed(tmp_path, tree, path) -> None:
    """Composable Kernel compiled at another commit: other kernels run. The pointer's row
    is `changed`, and the verdict asks for a device run (never N/A, never NONE)."""
    repo = _pointer_bump(tmp_path / "repo", tree_files(tree), path)
    doc = report(repo, commit="HEAD")
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    naming = [r for r in charged_rows(doc, "changed")
              if r["subject"] == path or path in {s["file"] for s in r["sides"]}]
    assert naming, doc["rows"]
    assert not charged_rows(doc, "mismatch")


def test_a_pointer_outside_the_map_is_not_taken_for_the_kernel_library(tmp_path) -> None:
    """The surface names its submodules: a documentation theme pinned as a submodule is
    not composable_kernel."""
    repo = _pointer_bump(tmp_path / "repo", tree_files("aiter_tree"), "docs/theme")
    doc = report(repo, commit="HEAD")
    assert doc["verdict"]["kind"] == "N/A", doc["rows"]


# -- two extensions, one op name ------------------------------------------------------------

# Written for this test: FA2's extension binds `fwd` through pybind with 4 C++ arguments;
# FA3's binds `fwd` through a TORCH_LIBRARY schema with 3. Each Python interface calls its
# own extension (FA3's through an alias of torch.ops, as the real interface does).
FA2_CPP = "csrc/flash_attn/flash_api.cpp"
FA3_CPP = "hopper/flash_api.cpp"
FA2_PY = "flash_attn/flash_attn_interface.py"
FA3_PY = "hopper/flash_attn_interface.py"

TWO_EXTENSIONS = {
    FA2_CPP: """#include <torch/python.h>

namespace flash {
std::vector<at::Tensor> mha_fwd(at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                                const float p_dropout) {
    return {q};
}
}  // namespace flash

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("fwd", &flash::mha_fwd, "FA2 forward");
}
""",
    FA3_CPP: """#include <torch/library.h>

std::vector<at::Tensor> mha_fwd(at::Tensor q, at::Tensor k, at::Tensor v) {
    return {q};
}

TORCH_LIBRARY(flash_attn_3, m) {
    m.def("fwd(Tensor q, Tensor k, Tensor v) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(flash_attn_3, CUDA, m) {
    m.impl("fwd", &mha_fwd);
}
""",
    FA2_PY: """import flash_attn_2_cuda as flash_attn_gpu


def attention(q, k, v, dropout_p=0.0):
    out = flash_attn_gpu.fwd(q, k, v, dropout_p)
    return out[0]
""",
    FA3_PY: """import torch

flash_attn_3_gpu = torch.ops.flash_attn_3


def attention(q, k, v):
    out = flash_attn_3_gpu.fwd(q, k, v)
    return out[0]
""",
    "setup.py": "from setuptools import setup\n\nsetup(name='flash_attn')\n",
}


def _two(*edits: e.Edit) -> Scenario:
    return scenario(TWO_EXTENSIONS, *edits)


SOFTCAP_IN_FA3_SCHEMA = e.replace(FA3_CPP, "Tensor v) -> Tensor[]",
                                  "Tensor v, float softcap) -> Tensor[]")
CAUSAL_IN_FA2_CPP = e.replace(FA2_CPP, "const float p_dropout)",
                              "const float p_dropout, bool causal)")


def _folders(row: dict) -> set[str]:
    return {s["file"].split("/")[0] for s in row["sides"]}


def test_the_base_tree_has_no_problem() -> None:
    """Each extension's copies agree with themselves: a comment edit reads nothing wrong
    (so what the tests below see is the change's, not the tree's)."""
    doc = report(_two(e.replace(FA2_CPP, '"FA2 forward"', '"forward (FA2)"')))
    assert not [r for r in doc["rows"] if r["status"] == "mismatch"], doc["rows"]


def test_fa3_gains_an_argument_on_every_side_of_its_own() -> None:
    """FA3's schema, C++ function and caller all gain `softcap`; FA2's 4-argument `fwd` is
    another extension's op and is never compared with any of them."""
    change = _two(e.replace(FA3_CPP, "at::Tensor v) {", "at::Tensor v, double softcap) {"),
                  SOFTCAP_IN_FA3_SCHEMA,
                  e.replace(FA3_PY, "fwd(q, k, v)", "fwd(q, k, v, 0.0)"))
    doc = report(change)
    assert not charged_rows(doc, "mismatch"), doc["rows"]
    assert doc["verdict"]["kind"] != "BREAKS"
    bindings = [r for r in doc["rows"] if r["contract"] == "bindings"]
    assert bindings, doc["rows"]
    assert all(_folders(r) <= {"hopper"} for r in bindings), bindings


def test_fa2_gains_an_argument_on_every_side_of_its_own() -> None:
    change = _two(CAUSAL_IN_FA2_CPP,
                  e.replace(FA2_PY, "fwd(q, k, v, dropout_p)", "fwd(q, k, v, dropout_p, False)"))
    doc = report(change)
    assert not charged_rows(doc, "mismatch"), doc["rows"]
    bindings = [r for r in doc["rows"] if r["contract"] == "bindings"]
    assert bindings and all("hopper" not in _folders(r) for r in bindings), bindings


def test_a_break_in_fa3_names_fa3_copies_only() -> None:
    """The schema gains an argument its C++ function lacks: a real break, whose sides are
    FA3's own; FA2's `fwd` (4 arguments, which the new schema count happens to equal) is
    not offered as the counterpart that fits."""
    change = _two(SOFTCAP_IN_FA3_SCHEMA)
    doc = report(change)
    rows = charged_rows(doc, "mismatch")
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert all(_folders(r) <= {"hopper"} for r in rows), rows


def test_a_break_in_fa2_names_fa2_copies_only() -> None:
    """FA2's C++ gains an argument its positional caller does not pass (pybind keeps no
    defaults): a break between FA2's caller and FA2's function only."""
    change = _two(CAUSAL_IN_FA2_CPP)
    doc = report(change)
    rows = charged_rows(doc, "mismatch")
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert all("hopper" not in _folders(r) for r in rows), rows
    assert {s["file"] for r in rows for s in r["sides"]} <= {FA2_CPP, FA2_PY}, rows


# -- the CuTe DSL package's pins ------------------------------------------------------------

CUTE_PINS = "flash_attn/cute/pyproject.toml"
PINS_TEXT = """[project]
name = "flash-attn-4"
dependencies = [
    "nvidia-cutlass-dsl==4.6.0.dev0",
    "quack-kernels>=0.5.3",
    "torch",
]
"""


def test_a_dsl_compiler_pin_change_reads_changed() -> None:
    """flash-attention 0251105a: only layout moved in the CuTe Python files, but the pin
    of the DSL compiler every FA4 kernel is generated with did change: not NONE."""
    base = {**tree_files("flash_attention_tree"), CUTE_PINS: PINS_TEXT,
            "tests/pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}
    change = Scenario(base=base, head=(Change("relax the pin", edits=(
        e.replace(CUTE_PINS, "nvidia-cutlass-dsl==4.6.0.dev0", "nvidia-cutlass-dsl>=4.6.2"),
    )),))
    doc = report(change)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["subject"] == CUTE_PINS for r in charged_rows(doc, "changed")), doc["rows"]
    # The tests' own pyproject is no pin of what runs.
    change = Scenario(base=base, head=(Change("test options", edits=(
        e.replace("tests/pyproject.toml", "-q", "-v"),)),))
    assert report(change)["verdict"]["kind"] == "N/A"


# -- a comment in a call that already did not fit -------------------------------------------


def _short_caller() -> dict[str, str]:
    """FA2's caller passes 3 arguments where the C++ function takes 4 (pybind keeps no
    default): a mismatch the tree already has."""
    return {**TWO_EXTENSIONS, FA2_PY: TWO_EXTENSIONS[FA2_PY].replace(
        "out = flash_attn_gpu.fwd(q, k, v, dropout_p)",
        "out = flash_attn_gpu.fwd(\n        q,\n        k,\n        v,\n    )")}


def test_a_comment_inside_a_call_does_not_charge_the_calls_old_mismatch() -> None:
    """flash-attention 00756db9: a comment added after one argument of a call whose count
    the base's C++ already disagreed with. The call passes what it passed (its arguments'
    digest is of their syntax trees, so a comment among them is layout): the file's
    change is layout only, and the base's mismatch is never charged to it."""
    base = _short_caller()
    change = Scenario(base=base, head=(Change("comment", edits=(
        e.replace(FA2_PY, "        v,\n    )", "        v,  # the values\n    )"),)),))
    doc = report(change)
    assert doc["verdict"]["kind"] == "NONE", doc["rows"]
    assert [(r["status"], r["reason"]) for r in doc["rows"]] == [
        ("inert", "only-layout-changed")], doc["rows"]
    assert not charged_rows(doc, "mismatch")


def test_a_call_that_passes_another_count_is_charged() -> None:
    """The same call now passing 5: it moved, and 5 fits no list."""
    base = _short_caller()
    change = Scenario(base=base, head=(Change("one more", edits=(
        e.replace(FA2_PY, "        v,\n    )", "        v,\n        0.0,\n        True,\n    )"),
    )),))
    doc = report(change)
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    rows = charged_rows(doc, "mismatch")
    assert {(s["file"], s["role"]) for r in rows for s in r["sides"]} >= {(FA2_PY, "changed")}


# -- an op file the file-level check hands over is never dropped ----------------------------


def test_a_repeated_identical_call_reads_changed_not_none() -> None:
    """flash-attention 3a7694c0: a guarded call added that states exactly what a call
    already in the same function states (a repeat), beside code no fact names. The
    facts differ only by that repeat: the file-level check hands the file over, and the
    bindings check must not drop it as unchanged."""
    change = _two(e.replace(
        FA2_PY, "    out = flash_attn_gpu.fwd(q, k, v, dropout_p)\n",
        "    out = flash_attn_gpu.fwd(q, k, v, dropout_p)\n"
        "    if out[0].isnan().any():\n"
        "        out = flash_attn_gpu.fwd(q, k, v, dropout_p)\n"))
    doc = report(change)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["contract"] == "bindings" and FA2_PY in {s["file"] for s in r["sides"]}
               for r in charged_rows(doc, "changed")), doc["rows"]


def test_a_fake_twin_signature_change_reads_changed_not_none() -> None:
    """A fake twin (what torch.compile traces instead of the op) gains a parameter; no
    stub, call or binding moves."""
    fake = ('\n\n@torch.library.register_fake("flash_attn_3::fwd")\n'
            "def _fwd_fake(q, k, v):\n    return [q.new_empty(q.shape)]\n")
    base = {**TWO_EXTENSIONS, FA3_PY: TWO_EXTENSIONS[FA3_PY] + fake}
    change = Scenario(base=base, head=(Change("fake gains softcap", edits=(
        e.replace(FA3_PY, "def _fwd_fake(q, k, v):", "def _fwd_fake(q, k, v, softcap=0.0):"),
    )),))
    doc = report(change)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]

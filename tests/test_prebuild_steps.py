"""A build script that compiles GPU code while it runs, outside any extension module it
declares: aiter's root setup.py prebuilds its JIT modules (`core.get_args_of_build`, then
`core.build_module` on each) and copies the source roots into the package for the JIT of
an installed aiter. An edit of such a statement, of one binding a name it reads (the
`exclude_ops` list), or of one naming a source root needs a device; the rest of the
script (version, classifiers, the distribution's name) stays in the DEPS lane.

Statements are read by impact/builds/steps.py, judged by `prebuild_edits`
(impact/graph/builds.py) with the map's `[builds] prebuild_functions` and `source_roots`,
and reported by the `extension-build` check."""

from __future__ import annotations

import pytest
from harness import report, scenario

from impact.builds.steps import step_facts
from impact.extract import FactCache
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.git import Snapshot
from impact.graph import BuildsGraph, prebuild_edits
from impact.surface import BuildRules, builtin_map

SETUP = '''"""aiter's build."""
import os
import shutil

from setuptools import setup

from jit import core

PACKAGE_NAME = "aiter"
PREBUILD_KERNELS = int(os.environ.get("PREBUILD_KERNELS", 0))
USE_SYSTEM_TRITON = int(os.environ.get("USE_SYSTEM_TRITON", 0))


def get_exclude_ops():
    found = []
    for name in ["module_gemm_tune", "module_norm"]:
        if name.endswith("_tune"):
            found.append(name)
    return found


if PREBUILD_KERNELS == 1:
    exclude_ops = ["module_mha_fwd", "module_mha_bwd"] + get_exclude_ops()
    exclude_ops.extend(["module_moe_tune"])
    all_opts, link = core.get_args_of_build("all", exclude=exclude_ops)

    def build_one(args):
        core.build_module(md_name=args["md_name"], srcs=args["srcs"], verbose=False)

    jobs = 4
    os.environ["PREBUILD_THREAD_NUM"] = "4"
    for one in all_opts:
        build_one(one)

os.makedirs("aiter_meta", exist_ok=True)
shutil.copytree("3rdparty", "aiter_meta/3rdparty")
shutil.copytree("hsa", "aiter_meta/hsa")
shutil.copytree("csrc", "aiter_meta/csrc")

setup(
    name=PACKAGE_NAME,
    version="0.1.0",
    classifiers=["Programming Language :: Python :: 3"],
    packages=["aiter_meta", "aiter"],
)
'''
ELIF = '''    for one in all_opts:
        build_one(one)
elif PREBUILD_KERNELS == 2:
    exclude_ops = []
    all_opts, link = core.get_args_of_build("all", exclude=exclude_ops)
'''


def aiter_with_setup() -> dict[str, bytes]:
    files = tree_files("aiter_tree")
    files["setup.py"] = SETUP.encode()
    return files


def rows_of(doc: dict, reason: str) -> list[dict]:
    return [r for r in doc["rows"] if r["contract"] == "extension-build"
            and r["reason"] == reason]


def hop_steps(row: dict) -> set[str]:
    return {h["step"] for h in row["evidence"]}


# --- edits that change what the package prebuilds or ships for the JIT -------------------

@pytest.mark.parametrize(("old", "new", "callee", "step"), [
    # the exclude list the prebuild reads
    ('["module_mha_fwd", "module_mha_bwd"]', '["module_mha_fwd"]', "core.get_args_of_build",
     "prebuild-input-edited"),
    # the prebuild call itself
    ("verbose=False", "verbose=True", "core.build_module", "prebuild-call-edited"),
    # a new PREBUILD_KERNELS branch with its own exclude list (aiter 7faa467c7e)
    ("    for one in all_opts:\n        build_one(one)\n", ELIF, "core.get_args_of_build",
     "prebuild-call-edited"),
    # what decides whether it prebuilds at all
    ('"PREBUILD_KERNELS", 0', '"PREBUILD_KERNELS", 1', "core.get_args_of_build",
     "prebuild-input-edited"),
    # the loop that calls the script's own prebuild function
    ("for one in all_opts:", "for one in all_opts[:1]:", "build_one", "prebuild-call-edited"),
    # a function of the script whose result the prebuild reads
    ('name.endswith("_tune")', 'name.endswith("_bwd")', "core.get_args_of_build",
     "prebuild-input-edited"),
    # a list the prebuild reads, changed through a method
    ('["module_moe_tune"]', '["module_moe_tune", "module_moe"]', "core.get_args_of_build",
     "prebuild-input-edited"),
    # a source root copied into the package (aiter 58ab9d1926)
    ('shutil.copytree("hsa", "aiter_meta/hsa")\n',
     'shutil.copytree("hsa", "aiter_meta/hsa")\nshutil.copytree("gradlib", '
     '"aiter_meta/gradlib")\n', "shutil.copytree", "source-root-named-edited"),
    # a folder that holds a source root (3rdparty/composable_kernel)
    ('copytree("3rdparty", "aiter_meta/3rdparty")',
     'copytree("3rdparty", "aiter_meta/3rd")', "shutil.copytree", "source-root-named-edited"),
])
def test_an_edit_of_a_prebuild_statement_needs_a_device(old: str, new: str, callee: str,
                                                        step: str) -> None:
    doc = report(scenario(aiter_with_setup(), e.replace("setup.py", old, new)))
    (row,) = rows_of(doc, "prebuild-step-changed")
    assert row["status"] == "changed" and row["lane"] == "IMPACT"
    assert callee in row["details"]["callees"], row["details"]
    assert step in hop_steps(row), row["evidence"]
    assert row["archs"] == ["all-archs"]
    assert all(side["file"] == "setup.py" and side["line"] > 0 for side in row["sides"])
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"
    assert doc["verdict"]["other_lanes"] == ["DEPS"]  # the lane row stays


@pytest.mark.parametrize(("old", "new"), [
    ('version="0.1.0"', 'version="0.2.0"'),
    ('classifiers=["Programming Language :: Python :: 3"]',
     'classifiers=["Programming Language :: Python :: 3", "Operating System :: Unix"]'),
    ('PACKAGE_NAME = "aiter"', 'PACKAGE_NAME = "amd-aiter"'),  # aiter 00eb23d463
    ('shutil.copytree("hsa", "aiter_meta/hsa")', 'shutil.copytree("hsa", "aiter_meta/co")'),
    ("    jobs = 4\n", "    jobs = 8\n"),
    # the environment read elsewhere: a method of a module changes nothing the prebuild reads
    ('"USE_SYSTEM_TRITON", 0', '"USE_SYSTEM_TRITON", 1'),
    # a method of a module called as a statement does not change the module
    ('os.makedirs("aiter_meta", exist_ok=True)', 'os.makedirs("aiter_meta", exist_ok=False)'),
    # layout and comments inside the prebuild block
    ("    jobs = 4\n", "    # how many\n    jobs = 4\n"),
    ("exclude_ops = [", "exclude_ops = [  # skipped\n    "),
    ('"""aiter\'s build."""', '"""aiter\'s build, prebuilding."""'),
])
def test_any_other_edit_of_the_script_stays_in_the_deps_lane(old: str, new: str) -> None:
    doc = report(scenario(aiter_with_setup(), e.replace("setup.py", old, new)))
    assert [r for r in doc["rows"] if r["contract"] == "extension-build"] == []
    assert doc["verdict"]["kind"] in ("N/A", "NONE")
    assert doc["verdict"]["other_lanes"] == ["DEPS"]


def test_a_prebuild_statement_moved_into_another_block_is_an_edit() -> None:
    """The key names the blocks a statement lies in: the same call under `else` is
    another statement, though no line of it changed."""
    moved = SETUP.replace("    jobs = 4\n", "else:\n    jobs = 4\n")
    doc = report(scenario(aiter_with_setup(), e.replace("setup.py", SETUP, moved)))
    (row,) = rows_of(doc, "prebuild-step-changed")
    assert "build_one" in row["details"]["callees"]


def test_a_new_setup_py_that_prebuilds_needs_a_device() -> None:
    files = tree_files("aiter_tree")

    def add(tree: dict[str, bytes]) -> None:
        tree["setup.py"] = SETUP.encode()
    doc = report(scenario(files, add))
    assert rows_of(doc, "prebuild-step-changed")
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


def test_a_script_that_stops_parsing_keeps_todays_row() -> None:
    """Fail closed as before: the unreadable build file is `changed`; no statement is
    judged on a script that does not parse."""
    doc = report(scenario(aiter_with_setup(), e.replace("setup.py", "jobs = 4", "jobs = (")))
    assert rows_of(doc, "prebuild-step-changed") == []
    (row,) = rows_of(doc, "build-file-not-read")
    assert row["status"] == "changed"
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


def test_a_report_through_a_git_repository(build) -> None:
    repo = build(scenario(aiter_with_setup(), e.replace(
        "setup.py", '["module_mha_fwd", "module_mha_bwd"]', '["module_mha_fwd"]')))
    doc = report(repo)
    (row,) = rows_of(doc, "prebuild-step-changed")
    line = next(n for n, text in enumerate(SETUP.splitlines(), 1) if "exclude_ops = [" in text)
    assert {s["line"] for s in row["sides"]} == {line}  # the exclude_ops line, both sides
    assert {s["revision"] for s in row["sides"]} == {"base", "head"}
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


# --- the facts and the rules ---------------------------------------------------------------

def test_a_map_without_prebuild_rules_judges_no_statement() -> None:
    files = aiter_with_setup()
    graph = BuildsGraph(Snapshot.from_files(files), FactCache(builtin_map("aiter")))
    steps = graph.steps_in("setup.py")
    assert isinstance(steps, tuple) and steps
    assert prebuild_edits("setup.py", (), steps, BuildRules()) == []
    rules = BuildRules(prebuild_functions=("build_module",))
    found = {e.callee for e in prebuild_edits("setup.py", (), steps, rules)}
    assert "core.build_module" in found and "shutil.copytree" not in found


@pytest.mark.parametrize(("name", "callee", "matches"), [
    ("build_module", "core.build_module", True),
    ("build_module", "build_module", True),
    ("core.build_module", "core.build_module", True),
    ("core.build_module", "other.build_module", False),
    ("build_module", "core.build_modules", False),
])
def test_a_prebuild_function_matches_by_its_dotted_name(name: str, callee: str,
                                                        matches: bool) -> None:
    assert BuildRules(prebuild_functions=(name,)).prebuilds(callee) is matches


def test_statement_facts_name_what_a_statement_calls_binds_and_names() -> None:
    import ast

    facts = step_facts(ast.parse(
        'ck = f"{here}/3rdparty/ck"\nif x:\n    y = core.run(ck, "csrc/a.cu")\n'))
    by_line = {f.line: f.data for f in facts}
    assert by_line[1]["paths"] == ["3rdparty/ck"] and by_line[1]["binds"] == ["ck"]
    assert by_line[2]["reads"] == ["x"] and by_line[2]["statement"] == "If"
    assert by_line[3]["callees"] == ["core.run"] and by_line[3]["paths"] == ["csrc/a.cu"]
    assert by_line[3]["parent"] == int(next(f.name for f in facts if f.line == 2))

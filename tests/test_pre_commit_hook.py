"""The pre-commit hook: `.pre-commit-hooks.yaml` and its `impact-pre-commit` entry point.

One test runs the real thing: pre-commit, with the config `pre-commit try-repo <this
checkout> impact` writes, inside scenario repositories with uncommitted edits; pre-commit
builds the hook's Python environment once (pip installs this checkout from the package
index) and every case reuses it. The rest call the entry point in-process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dulwich.repo import Repo

from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS, EXIT_NEEDS_DEVICE, EXIT_NONE
from impact.fixtures import BuiltRepository, Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import BASE_TO_HEAD, open_repository
from impact.git.upstream import comparison_base, current_branch
from impact.integrations import pre_commit

ROOT = Path(__file__).resolve().parents[1]
BODY_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                      "return (spec.num_waves * 64 + 0, 1, 1)")


def _work(build, *edits: e.Edit) -> BuiltRepository:
    """A checkout of an unchanged tree whose working tree holds `edits`, uncommitted."""
    built = build(Scenario(base=rocke_tree_files()), checkout=True)
    files = {e.GFX950_DENSE: (built.path / e.GFX950_DENSE).read_bytes()}
    for edit in edits:
        edit(files)
    (built.path / e.GFX950_DENSE).write_bytes(files[e.GFX950_DENSE])
    return built


def test_hook_manifest() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "impact" and hook["language"] == "python"
    assert hook["entry"] == "impact-pre-commit"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'impact-pre-commit = "impact.integrations.pre_commit:main"' in pyproject


def _git_checkout_with_committed_manifest() -> str | None:
    """Why try-repo cannot run on this checkout, or None when it can."""
    if shutil.which("git") is None:
        return "git is not installed"
    try:
        import pre_commit as _  # noqa: F401
    except ImportError:
        return "pre-commit is not installed (pip install '.[test]')"
    listed = subprocess.run(["git", "ls-files", "--error-unmatch", ".pre-commit-hooks.yaml"],
                            cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        return "this checkout is not a git repository with .pre-commit-hooks.yaml committed"
    return None


def _snapshot(tmp_path: Path) -> tuple[Path, str]:
    """A clone of this checkout holding its uncommitted tracked edits as one commit, as
    try-repo's own shadow repository would, but made once: try-repo makes its shadow in a
    new temporary folder each run, so the hook environment could never be reused."""
    shadow = tmp_path / "checkout"

    def git(*args: str, cwd: Path = shadow) -> str:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=True).stdout.strip()

    head = git("rev-parse", "HEAD", cwd=ROOT)
    git("clone", "-q", "--no-checkout", str(ROOT), str(shadow), cwd=tmp_path)
    git("checkout", "-q", head)
    changed = git("diff", "--name-only", "HEAD", cwd=ROOT).splitlines()
    for path in changed:
        source, copy = ROOT / path, shadow / path
        if source.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
        else:
            copy.unlink(missing_ok=True)
    if changed:
        git("add", "-A", "--", *changed)
        git("-c", "user.name=impact tests", "-c", "user.email=tests@example.invalid",
            "commit", "-q", "--no-verify", "-m", "uncommitted edits of the checkout")
    return shadow, git("rev-parse", "HEAD")


@pytest.mark.slow  # pre-commit builds the hook's environment, then runs it in repositories
def test_pre_commit_fails_on_breaks_passes_a_comment_edit_and_takes_fail_on(
        build, tmp_path: Path) -> None:
    why = _git_checkout_with_committed_manifest()
    if why:
        pytest.skip(why)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PRE_COMMIT_COLOR": "never"}
    env.pop("PRE_COMMIT_FROM_REF", None)
    env.pop("PRE_COMMIT_TO_REF", None)
    hooks_repo, ref = _snapshot(tmp_path)

    def run(built: BuiltRepository, *args: str) -> subprocess.CompletedProcess[str]:
        # The config `pre-commit try-repo <checkout> impact` writes, plus the hook's args.
        # try-repo itself keeps its store in a fresh temporary folder on every call
        # (pre_commit/commands/try_repo.py), so its hook environment, a pip install of
        # this checkout, would be built once per case; `run --config` reuses it.
        hook = {"id": "impact", **({"args": list(args)} if args else {})}
        config = tmp_path / f"config-{built.path.name}.yaml"
        config.write_text(yaml.safe_dump({"repos": [
            {"repo": str(hooks_repo), "rev": ref, "hooks": [hook]}]}), encoding="utf-8")
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--config", str(config), "impact",
             "--all-files"], cwd=built.path, env=env, capture_output=True, text=True,
            timeout=900, check=False)

    breaks = run(_work(build, e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")))
    assert "Installing environment" in breaks.stdout, breaks.stdout + breaks.stderr
    assert breaks.returncode == 1, breaks.stdout + breaks.stderr
    assert "impact (runtime impact of the change)" in breaks.stdout
    assert "Failed" in breaks.stdout and f"exit code: {EXIT_BREAKS}" in breaks.stdout
    assert "argument added on the Python side only: dropout_seed" in breaks.stdout
    assert "Runtime impact: BREAKS" in breaks.stdout

    comment = run(_work(build, e.edit_comment(e.GFX950_DENSE)))
    assert "Installing environment" not in comment.stdout  # the first case's is reused
    assert comment.returncode == 0, comment.stdout + comment.stderr
    assert "Passed" in comment.stdout

    body = _work(build, BODY_EDIT)
    assert run(body).returncode == 0
    strict = run(body, "--fail-on", "needs-device")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert f"exit code: {EXIT_NEEDS_DEVICE}" in strict.stdout
    assert "Runtime impact: NEEDS-DEVICE gfx950" in strict.stdout


def test_entry_point_prints_findings_and_verdict_and_fails_on_breaks(build, capsys) -> None:
    built = _work(build, e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"))
    assert pre_commit.main(["--repo", str(built.path)], env={}) == EXIT_BREAKS
    out = capsys.readouterr().out.splitlines()
    assert "Runtime impact: BREAKS" in out
    assert any("dropout_seed" in line and "kernargs" in line for line in out)
    assert out[-1] == "impact-pre-commit: failing on this verdict (--fail-on breaks)"


def test_comment_edit_passes(build, capsys) -> None:
    built = _work(build, e.edit_comment(e.GFX950_DENSE))
    assert pre_commit.main(["--repo", str(built.path)], env={}) == EXIT_NONE
    assert capsys.readouterr().out.splitlines()[-1] == "Runtime impact: NONE"


def test_needs_device_passes_by_default_and_fails_when_asked(build, capsys) -> None:
    built = _work(build, BODY_EDIT)
    argv = ["--repo", str(built.path)]
    assert pre_commit.main(argv, env={}) == EXIT_NONE
    assert "Runtime impact: NEEDS-DEVICE gfx950" in capsys.readouterr().out
    assert pre_commit.main([*argv, "--fail-on", "needs-device"], env={}) == EXIT_NEEDS_DEVICE
    assert pre_commit.main([*argv, "--fail-on", "never"], env={}) == EXIT_NONE


def test_pre_push_reports_on_the_pushed_commits(build, capsys) -> None:
    built = build(Scenario(base=rocke_tree_files(), head=(
        Change("add an argument", edits=(e.add_builder_param(e.GFX950_DENSE, "seed", "I32"),)),
    )), checkout=True)
    push = {"PRE_COMMIT_FROM_REF": built.base, "PRE_COMMIT_TO_REF": built.head}
    assert pre_commit.main(["--repo", str(built.path)], env=push) == EXIT_BREAKS
    assert "Runtime impact: BREAKS" in capsys.readouterr().out
    # The working tree is clean: without the refs there is nothing to report.
    assert pre_commit.main(["--repo", str(built.path)], env={}) == EXIT_NONE
    assert capsys.readouterr().out.splitlines()[-1] == "Runtime impact: N/A"


def test_a_report_that_cannot_run_fails_the_hook_even_with_never(tmp_path: Path, capsys) -> None:
    code = pre_commit.main(["--repo", str(tmp_path), "--fail-on", "never"], env={})
    assert code == EXIT_BAD_INPUT
    assert "impact: error:" in capsys.readouterr().err


def test_the_readme_config_names_the_hook() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it in CI and before you push", 1)[1].split("\n## ", 1)[0]
    configs = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    config = next(c for c in configs if "repos" in c)
    assert [h["id"] for h in config["repos"][0]["hooks"]] == ["impact"]
    assert re.fullmatch(r"v\d+\.\d+\.\d+", config["repos"][0]["rev"])  # a tag, not a branch
    for words in ("merge base", "upstream", "origin/HEAD", "never passes silently",
                  "git push -u", "--base REV"):
        assert words in section, words
    assert "pre-push" in config["default_install_hook_types"]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert "pre-push" in hooks[0]["stages"]


# --- a push that names no remote commit: never a silent pass ------------------------------

BREAKING_BRANCH = Scenario(
    base=rocke_tree_files(),
    head=(Change("add an argument", edits=(e.add_builder_param(e.GFX950_DENSE, "seed", "I32"),)),),
    target=(Change("unrelated: a note", write={"NOTES.md": "target moved\n"}),),
)
NEW_HISTORY = {  # what pre-commit sets when the remote has none of the pushed commits
    "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/head", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/head",
    "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_URL": "https://example.invalid/r.git",
}


def _refs(built: BuiltRepository, refs: dict[str, str], upstream: str | None = None,
          symbolic: dict[str, str] | None = None) -> None:
    """Point `refs` at commits of `built` (as a fetch would), `symbolic` refs at refs, and
    give the branch `head` the upstream `origin/<upstream>`."""
    repo = Repo(str(built.path))
    for ref, sha in refs.items():
        repo.refs[ref.encode()] = sha.encode()
    for ref, target in (symbolic or {}).items():
        repo.refs.set_symbolic_ref(ref.encode(), target.encode())
    if upstream:
        config = repo.get_config()
        config.set((b"branch", b"head"), b"remote", b"origin")
        config.set((b"branch", b"head"), b"merge", f"refs/heads/{upstream}".encode())
        config.write_to_path()
    repo.close()


@pytest.mark.parametrize("env", [
    NEW_HISTORY,
    {**NEW_HISTORY, "PRE_COMMIT_FROM_REF": "0" * 40, "PRE_COMMIT_TO_REF": "refs/heads/head"},
], ids=["no-from-ref", "all-zero-from-ref"])
def test_a_push_with_nothing_to_compare_with_fails_with_one_line(build, capsys, env) -> None:
    built = build(BREAKING_BRANCH, checkout=True)  # no remote, no upstream, no main/master
    code = pre_commit.main(["--repo", str(built.path), "--fail-on", "never"], env=env)
    assert code == EXIT_BAD_INPUT
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("impact: error: nothing to compare the push of 'head' with")
    assert "git push -u" in line and "--set-upstream-to" in line and "--base" in line


@pytest.mark.parametrize("env", [
    NEW_HISTORY,
    {**NEW_HISTORY, "PRE_COMMIT_FROM_REF": "0" * 40, "PRE_COMMIT_TO_REF": "refs/heads/head"},
], ids=["no-from-ref", "all-zero-from-ref"])
def test_a_new_branch_is_compared_with_its_upstreams_merge_base(build, capsys, env) -> None:
    built = build(BREAKING_BRANCH, checkout=True)
    # The upstream moved on (the target's note): the push is compared from the merge base.
    _refs(built, {"refs/remotes/origin/develop": built.target}, upstream="develop")
    assert pre_commit.main(["--repo", str(built.path)], env=env) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert f"comparing with its merge base with origin/develop ({built.target[:12]})" in out
    assert "Runtime impact: BREAKS" in out and "seed" in out
    result = pre_commit._report(pre_commit._parser().parse_args(["--repo", str(built.path)]),
                                env)
    assert result.document["merge_bases"][BASE_TO_HEAD] == [built.base]


def test_a_new_branch_without_upstream_is_compared_with_the_default_branch(build, capsys) -> None:
    built = build(BREAKING_BRANCH, checkout=True)
    _refs(built, {"refs/remotes/origin/trunk": built.target, "refs/heads/main": built.head},
          symbolic={"refs/remotes/origin/HEAD": "refs/remotes/origin/trunk"})
    assert pre_commit.main(["--repo", str(built.path)], env=NEW_HISTORY) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert "merge base with origin/trunk" in out and "Runtime impact: BREAKS" in out
    # --base names it instead; a base that already holds the push has nothing new.
    argv = ["--repo", str(built.path), "--base", "main"]
    assert pre_commit.main(argv, env=NEW_HISTORY) == EXIT_NONE
    out = capsys.readouterr().out
    assert "merge base with main" in out and out.splitlines()[-1] == "Runtime impact: N/A"


@pytest.mark.parametrize("refs, symbolic, upstream, branch, expected", [
    ({"refs/remotes/origin/dev": "t", "refs/remotes/origin/main": "b"}, {}, "dev", "head",
     "origin/dev"),
    ({"refs/remotes/origin/main": "b"}, {}, "gone", "head", "origin/main"),  # upstream unfetched
    ({"refs/remotes/origin/trunk": "t", "refs/remotes/origin/main": "b"},
     {"refs/remotes/origin/HEAD": "refs/remotes/origin/trunk"}, None, "head", "origin/trunk"),
    ({"refs/remotes/origin/main": "b", "refs/remotes/origin/master": "t"}, {}, None, "head",
     "origin/main"),
    ({"refs/remotes/origin/master": "t", "refs/heads/main": "b"}, {}, None, "head",
     "origin/master"),
    ({"refs/heads/master": "b"}, {}, None, "head", "master"),
    ({"refs/heads/main": "b"}, {}, None, "refs/heads/main", None),  # not the branch itself
    ({}, {}, None, "head", None),
], ids=["upstream", "unfetched-upstream", "origin-HEAD", "origin-main", "origin-master",
        "local-master", "only-itself", "none"])
def test_the_comparison_base_is_the_upstream_else_the_default_branch(
        build, refs, symbolic, upstream, branch, expected) -> None:
    built = build(BREAKING_BRANCH, checkout=True)
    shas = {"t": built.target, "b": built.base}
    _refs(built, {ref: shas[key] for ref, key in refs.items()}, upstream, symbolic)
    repository = open_repository(built.path)
    if branch == "head":
        branch = current_branch(repository)
        assert branch == "refs/heads/head"
    found = comparison_base(repository, branch)
    assert (found.spelled if found else None) == expected
    if found:
        assert found.sha == repository.resolve(expected).sha


def test_the_commit_stage_still_reports_on_the_work_being_committed(build, capsys) -> None:
    built = build(BREAKING_BRANCH, checkout=True)  # committed break, clean work tree
    assert pre_commit.main(["--repo", str(built.path)], env={}) == EXIT_NONE
    assert capsys.readouterr().out.splitlines()[-1] == "Runtime impact: N/A"


def _pre_commit_push_env(stdin: str) -> dict[str, str]:
    """The environment pre-commit gives a pre-push hook for `stdin` (git's pre-push lines):
    its own reading of them (`pre_commit.commands.hook_impl._pre_push_ns`) turned into
    variables as `pre_commit/commands/run.py` sets them."""
    hook_impl = pytest.importorskip("pre_commit.commands.hook_impl")
    ns = hook_impl._pre_push_ns(False, ["origin", "https://example.invalid/r.git"],
                                stdin.encode())
    assert ns is not None, "pre-commit saw nothing to push"
    env = {}
    if ns.from_ref and ns.to_ref:
        env |= {"PRE_COMMIT_FROM_REF": ns.from_ref, "PRE_COMMIT_TO_REF": ns.to_ref}
    if ns.remote_name and ns.remote_url and ns.remote_branch and ns.local_branch:
        env |= {"PRE_COMMIT_LOCAL_BRANCH": ns.local_branch,
                "PRE_COMMIT_REMOTE_BRANCH": ns.remote_branch,
                "PRE_COMMIT_REMOTE_NAME": ns.remote_name, "PRE_COMMIT_REMOTE_URL": ns.remote_url}
    return env


def test_a_first_push_as_pre_commit_runs_it_blocks_a_break(build, capsys, monkeypatch) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    built = build(BREAKING_BRANCH, checkout=True)
    monkeypatch.chdir(built.path)  # pre-commit asks git about the repository it runs in
    env = _pre_commit_push_env(f"refs/heads/head {built.head} refs/heads/head {'0' * 40}\n")
    assert "PRE_COMMIT_FROM_REF" not in env  # the remote has none of it: no refs at all
    argv = ["--repo", str(built.path)]
    assert pre_commit.main(argv, env=env) == EXIT_BAD_INPUT
    assert "git push -u" in capsys.readouterr().err
    _refs(built, {"refs/heads/main": built.target})
    assert pre_commit.main(argv, env=env) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert "merge base with main" in out and "Runtime impact: BREAKS" in out

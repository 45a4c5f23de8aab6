"""benchmarks/stale.py's replay: a commit's change lands on the older base as a cherry-pick
would, and a change that cannot land there is refused with the reason."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from dulwich.repo import Repo
from script_loader import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "stale.py"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


def _load_stale():
    return load_script(SCRIPT, "stale_benchmark")


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", message], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shas = {
        "c0": _commit(repo, {"a.txt": "1\n2\n3\n4\n5\n6\n", "b.txt": "x\n"}, "c0"),
        "c1": _commit(repo, {"b.txt": "y\n"}, "c1: only b"),
        "c2": _commit(repo, {"a.txt": "1\n2\n3\n4\n5\nsix\n"}, "c2: the end of a"),
        "c3": _commit(repo, {"a.txt": "one\n2\n3\n4\n5\nsix\n"}, "c3: the start of a"),
        "c4": _commit(repo, {"a.txt": "uno\n2\n3\n4\n5\nsix\n"}, "c4: the start again"),
        "c5": _commit(repo, {"a.txt": "uno\n2\n3\n4\n5\n6\n"}, "c5: c2 reverted"),
    }
    return repo, shas


def test_a_change_is_replayed_onto_the_older_base(history) -> None:
    stale = _load_stale()
    path, shas = history
    repo = Repo(str(path))
    made = stale.replay(repo, shas["c3"], 2)  # c3's change onto c0
    assert not isinstance(made, str), made
    base, head, parent = made
    assert (base, parent) == (shas["c0"], shas["c2"])
    tree = repo[repo[head.encode()].tree]
    texts = {name.decode(): repo[sha].data.decode() for name, _mode, sha in tree.iteritems()}
    # c3's edit of a's first line lands on c0; c1's and c2's edits do not come along.
    assert texts == {"a.txt": "one\n2\n3\n4\n5\n6\n", "b.txt": "x\n"}
    assert repo[head.encode()].parents == [shas["c0"].encode()]


def test_a_change_that_cannot_land_is_refused(history) -> None:
    stale = _load_stale()
    path, shas = history
    repo = Repo(str(path))
    # c4 rewrites the line c3 wrote; at c1 that line is still '1': the replay conflicts.
    assert stale.replay(repo, shas["c4"], 2) == "the replay conflicts"
    assert stale.replay(repo, shas["c1"], 5) == "fewer than 5 commits below its parent"
    assert stale.replay(repo, shas["c0"], 1) == "a root commit"


def test_a_replay_that_does_not_merge_back_to_the_commit_is_refused(history) -> None:
    """c5 reverts c2; replayed onto c0, which never had c2, it changes nothing, and merged
    onto c4 it gives c4, not c5: the two reports would not compare the same change."""
    stale = _load_stale()
    path, shas = history
    repo = Repo(str(path))
    assert stale.replay(repo, shas["c5"], 4) == \
        "merged onto the tip, the replay is not the commit"

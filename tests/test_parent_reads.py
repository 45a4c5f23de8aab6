"""What the parent reads back from a child or an earlier run is a regular file, or nothing
(issue 25, robustness): a FIFO there would hang the parent, a symlink to `/dev/zero` blow
its memory, a symlink to a secret carry the secret into the report. Each is refused in
the time it takes to open it: a child's document or reads record then counts as the child
failing (its rows read changed), a cache entry as a miss.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from emit.child.vocabulary import RunStatus
from emit.children import Run
from impact.factstore import FactStore

SECRET = '"a secret the parent must not read"'  # JSON: a schema error would quote it


class Blocked(BaseException):
    """The body was still blocked at its deadline (not an OSError or an Exception, so
    the code under test cannot catch it as a miss)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail, rather than hang, when the body blocks (a FIFO read waits for a writer)."""
    def late(_number: int, _frame: object) -> None:
        raise Blocked(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("depends on /dev/zero, which this system does not give")
    path.symlink_to("/dev/zero")


def _secret(path: Path) -> None:
    secret = path.parent / "secret.json"
    secret.write_text(SECRET)
    path.symlink_to(secret)


SPECIAL: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo, "dev-zero-symlink": _zero, "symlink-to-a-secret": _secret}


def _place(kind: str, path: Path) -> None:
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("depends on FIFOs (os.mkfifo), which this system does not give")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    SPECIAL[kind](path)


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_read_regular_refuses_all_but_a_regular_file(tmp_path: Path, kind: str) -> None:
    from impact.safefile import read_regular

    _place(kind, tmp_path / "x")
    with deadline(5), pytest.raises(OSError):
        read_regular(tmp_path / "x", limit=1 << 20)


def test_read_regular_caps_the_size(tmp_path: Path) -> None:
    from impact.safefile import read_regular

    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(OSError):
        read_regular(tmp_path / "big", limit=100)
    assert read_regular(tmp_path / "big", limit=101) == b"x" * 101


def _run(tmp_path: Path) -> Run:
    work = tmp_path / "work"
    work.mkdir()
    run = Run("head", None, {}, work, work / "out.json", reads=work / "reads.json")
    run.status = RunStatus.DONE
    return run


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_a_child_document_that_is_not_a_regular_file_is_a_crash(tmp_path: Path,
                                                                 kind: str) -> None:
    from emit.results import read_result

    run = _run(tmp_path)
    _place(kind, run.out)
    with deadline(5):
        assert read_result(run) is None
    assert run.status == RunStatus.CRASHED and "unusable" in (run.reason or "")
    assert "secret" not in (run.reason or "")


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_a_reads_record_that_is_not_a_regular_file_stores_nothing(tmp_path: Path,
                                                                  kind: str) -> None:
    from emit.reuse import _read_reads

    run = _run(tmp_path)
    assert run.reads is not None
    _place(kind, run.reads)
    with deadline(5):
        assert _read_reads(run) is None


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_a_cache_entry_that_is_not_a_regular_file_is_a_miss(tmp_path: Path, kind: str) -> None:
    store = FactStore(tmp_path)
    key = store.key("s" * 64, "a.py", "b" * 40)
    assert key is not None
    store.save(key, "[]")
    _place(kind, store._file(key))
    with deadline(5):
        assert store.load(key) is None  # the facts of one file
        assert store.get(key) is None   # the emit and report stores' entries
    pairs = store._index_key("s" * 64, "t" * 40, "paths")
    assert pairs is not None
    _place(kind, store._file(pairs))
    with deadline(5):
        assert store.load_index("s" * 64, "t" * 40) is None  # a tree's classification
    assert store.misses >= 1


def test_a_secret_linked_as_an_entry_is_never_a_hit(tmp_path: Path) -> None:
    """Even a well-formed entry is refused through a symlink: entries are files the
    parent renamed into place, never links."""
    store = FactStore(tmp_path)
    key = store.key("s" * 64, "a.py", "b" * 40)
    assert key is not None
    store.save(key, "[]")
    real = tmp_path / "elsewhere.json"
    store._file(key).rename(real)
    store._file(key).symlink_to(real)
    assert json.loads(real.read_text())["facts"] == []
    assert store.load(key) is None


READ_IN_A_CHILD = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a safety net, far above the cap
what, folder = sys.argv[1], Path(sys.argv[2])
from emit.child.vocabulary import RunStatus
from emit.children import Run
run = Run("head", None, {}, folder, folder / "zero", reads=folder / "zero")
run.status = RunStatus.DONE
if what == "document":
    from emit.results import read_result
    assert read_result(run) is None
elif what == "reads":
    from emit.reuse import _read_reads
    assert _read_reads(run) is None
else:
    from impact.factstore import FactStore
    store = FactStore(folder / "cache")
    key = store.key("s" * 64, "a.py", "b" * 40)
    store._file(key).parent.mkdir(parents=True, exist_ok=True)
    store._file(key).symlink_to("/dev/zero")
    try:
        assert store.load(key) is None and store.get(key) is None
    except MemoryError:
        print("memory-error")
# This process's own peak: /proc's VmHWM is its memory's high-water mark since exec;
# ru_maxrss also counts the forking parent's (a pytest grown large in a full run).
status = Path("/proc/self/status")
peak = next((line.split()[1] for line in status.read_text().splitlines()
             if line.startswith("VmHWM:")), None) if status.exists() else None
print(peak or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.parametrize("what", ["document", "reads", "cache-entry"])
def test_dev_zero_where_the_parent_reads_costs_it_no_memory(tmp_path: Path, what: str) -> None:
    """Read in a child process (under an address-space limit, so a regression fails
    rather than swapping): a `/dev/zero` symlink costs no more than the imports."""
    import subprocess
    import sys

    if not os.path.exists("/dev/zero"):
        pytest.skip("depends on /dev/zero, which this system does not give")
    (tmp_path / "zero").symlink_to("/dev/zero")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", READ_IN_A_CHILD, what, str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split()
    assert "memory-error" not in lines
    assert int(lines[-1]) < 400_000, f"peak RSS {lines[-1]} KiB"  # the imports: ~100 MiB


def test_a_bench_command_that_swaps_its_log_for_a_fifo_fails_its_round(tmp_path: Path) -> None:
    """`impact validate` reads a bench command's output back from its log file; a head
    command that replaces that file with a FIFO makes the round fail, never hang."""
    from impact.validate.perf import run_bench

    log = tmp_path / "bench.log"
    command = f"echo 'k: 1.0'; rm -f {log}; mkfifo {log}"
    with deadline(10):
        done = run_bench(command, tmp_path, {"PATH": "/usr/bin:/bin"}, log, "head", 60)
    assert done.error and "cannot be read" in done.error and done.values == {}


def test_a_fifo_among_the_identity_records_is_skipped(tmp_path: Path) -> None:
    from impact.validate.identity import read_identity

    os.mkfifo(tmp_path / "1.json")
    (tmp_path / "2.json").write_text(json.dumps({"module_path": "/x", "native_artifacts": []}))
    with deadline(5):
        found = read_identity(tmp_path, "0" * 40)
    assert found is not None and found.get("module_path") == "/x"

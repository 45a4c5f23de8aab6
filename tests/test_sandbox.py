"""The emitter's sandbox against code written to break out of it.

The hostile code is module-level code appended to a head builder (the tiled 2-D attention
module) of a scenario repository: the child imports it, so it runs inside the sandbox.
Each protection that depends on the OS (user, network, PID and mount namespaces without
privileges) is read back from the emit file's `protections` record; where this system
refused one, the test that needs it is skipped and says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import rendered

import emit
from emit.children import Limits
from emit.emitfile import write_emit_file
from emit.runner import run_emit
from emit.sandbox import HOSTNAME
from impact.contracts import validate
from impact.fixtures import Change, Scenario, build_repository
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import open_views
from impact.surface import load_surface_map

TREE = rocke_tree_files()
TILED = f"{e.KERNELS}/gfx950/attention_tiled_2d.py"
SECRET = "ghp_sandbox_test_token_0123456789"


def hostile(code: str) -> Change:
    """A head whose tiled builder module runs `code` when the child imports it."""
    return Change("hostile", edits=(e.append(TILED, "\n" + textwrap.dedent(code)),))


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


def kill_all(marker: str) -> None:
    """Teardown only: end what a failing run left behind, so one failure stays one."""
    for pid in processes_with(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def wait_until(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def require(document: dict, *names: str) -> None:
    """Skip, naming the reason, where this OS refused a protection the test relies on."""
    record = document["revisions"]["head"]["protections"]
    missing = [n for n in names if not record[n]]
    if missing:
        pytest.skip(f"this system refused the {', '.join(missing)} protection(s) without "
                    f"privileges ({record['detail']}); the emit file records it")


# ---------------------------------------------------------------------------
# One hostile head, run once; each protection is one test
# ---------------------------------------------------------------------------

HOSTILE = """
import os as _os, socket as _socket, subprocess as _sp, sys as _sys
from pathlib import Path as _Path

_seen = []


def _attempt(what, action):
    try:
        action()
        _seen.append(what + ": ok")
    except BaseException as exc:
        _seen.append(f"{{what}}: {{type(exc).__name__}}")


def _write(path):
    _Path(path).write_text("#!/bin/sh\\necho pwned\\n")


def _connect():
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    s.connect({socket!r})
    s.sendall(b"hello from the sandbox")


def _shm(shmid):
    import ctypes as _ctypes
    libc = _ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = _ctypes.c_void_p
    address = libc.shmat(shmid, None, 0)
    if address is None or address == 2 ** 64 - 1:
        raise OSError(_ctypes.get_errno(), "shmat")


_secret = []
_attempt("hooks", lambda: _write({hook!r}))
_attempt("home", lambda: _write({home_file!r}))
_attempt("package", lambda: _write({package_file!r}))
_attempt("other-scratch", lambda: _write(
    _Path(_os.environ["HOME"]).parent.parent / "base" / "forged.json"))
_attempt("sibling-scratch", lambda: _write(
    _Path(_os.environ["HOME"]).parent.parent / "head-plan" / "forged.json"))
_attempt("tree", lambda: _write(_Path(__file__).with_name("forged.py")))
_attempt("credentials", lambda: _secret.append(_Path({credentials!r}).read_text()))
_attempt("socket", _connect)
_attempt("daemon", lambda: _sp.run([_sys.executable, "-c",
    "import os, time\\nif os.fork(): os._exit(0)\\nos.setsid()\\n"
    "if os.fork(): os._exit(0)\\ntime.sleep(600)", {marker!r} + "-daemon"], check=True))
_attempt("pgid", lambda: _sp.Popen([_sys.executable, "-c", "import time; time.sleep(600)",
    {marker!r} + "-pgid"], process_group=0))
_attempt("host-shm", lambda: _shm({shmid}))
_attempt("kvm", lambda: open("/dev/kvm", "rb").close())
_attempt("console", lambda: open("/dev/console", "rb").close())
_attempt("dev-tty", lambda: open("/dev/tty", "rb").close())
_seen.append(f"stdin-tty: {{_os.isatty(0)}}")
_seen.append(f"hostname: {{_socket.gethostname()}}")
raise RuntimeError("hostile builder: " + "; ".join(_seen) + " " + "".join(_secret))
"""


class HostileRun:
    def __init__(self, root: Path, jobs: int = 2) -> None:
        self.root = root
        self.jobs = jobs
        self.marker = f"impact-sandbox-hostile-{os.getpid()}-{jobs}"
        self.home = root / "home"
        self.home.mkdir()
        (self.home / ".git-credentials").write_text(f"https://user:{SECRET}@github.com\n")
        self.package_file = Path(emit.__file__).parent / f".sandbox-probe-{os.getpid()}"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(root / "s.sock"))
        self.listener.listen(8)
        self.listener.setblocking(False)
        import ctypes

        self.libc = ctypes.CDLL(None, use_errno=True)
        self.shmid = self.libc.shmget(0, 4096, 0o600 | 0o1000)  # the host's, IPC_PRIVATE

    def run(self) -> None:
        repo_path = self.root / "repo"
        code = HOSTILE.format(socket=str(self.root / "s.sock"), shmid=self.shmid,
                              hook=str(repo_path / ".git" / "hooks" / "pre-commit"),
                              home_file=str(self.home / "planted"),
                              package_file=str(self.package_file),
                              credentials=str(self.home / ".git-credentials"),
                              marker=self.marker)
        self.repo = build_repository(Scenario(base=TREE, head=(hostile(code),)), repo_path)
        self.hook = repo_path / ".git" / "hooks" / "pre-commit"
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HOME", str(self.home))  # the analyser's own home, with its secrets
            views = open_views(repo_path, base="base", head="head")
            self.document = run_emit(views, load_surface_map(), jobs=self.jobs,
                                     limits=Limits(family_budget=60, timeout=300))
        self.survivors = processes_with(self.marker)
        self.emit_file = self.root / "emit.json"
        write_emit_file(self.document, self.emit_file)
        self.report = rendered(repo_path, "json", emit=str(self.emit_file))
        try:
            self.accepted, _ = self.listener.accept()
        except BlockingIOError:
            self.accepted = None


@pytest.fixture(scope="module", params=[2, 6], ids=["jobs2", "jobs6"])
def attack(request, tmp_path_factory) -> Iterator[HostileRun]:
    """The hostile head, emitted with one child per revision (2 jobs) and split among
    several children per revision (6 jobs: a planning child, then one per group)."""
    run = HostileRun(tmp_path_factory.mktemp("hostile"), jobs=request.param)
    try:
        run.run()
        yield run
    finally:
        kill_all(run.marker)
        run.package_file.unlink(missing_ok=True)
        run.listener.close()
        run.libc.shmctl(run.shmid, 0, None)  # IPC_RMID


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_the_hostile_code_ran(attack) -> None:
    text = attack.emit_file.read_text()
    assert "hostile builder: hooks:" in text  # the family's error carries what it tried
    validate(attack.document, "emit.schema.json")


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_write_the_repositorys_git_hooks(attack) -> None:
    require(attack.document, "mount")
    assert not attack.hook.exists()
    assert "hooks: ok" not in attack.emit_file.read_text()


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_write_the_users_home(attack) -> None:
    require(attack.document, "mount")
    assert not (attack.home / "planted").exists()
    assert "home: ok" not in attack.emit_file.read_text()


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_patch_the_installed_analyser(attack) -> None:
    require(attack.document, "mount")
    assert not attack.package_file.exists()
    assert "package: ok" not in attack.emit_file.read_text()


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_write_the_other_revisions_scratch_folder(attack) -> None:
    require(attack.document, "mount")
    assert "other-scratch: ok" not in attack.emit_file.read_text()


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_write_a_sibling_childs_scratch_folder_or_the_tree(attack) -> None:
    """With several children per revision, each has its own scratch folder; the tree they
    share is read-only to all of them."""
    require(attack.document, "mount")
    text = attack.emit_file.read_text()
    assert "sibling-scratch: " in text and "sibling-scratch: ok" not in text
    assert "tree: " in text and "tree: ok" not in text


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_credentials_never_reach_the_emit_file_or_the_report(attack) -> None:
    require(attack.document, "mount")
    assert "credentials: ok" not in attack.emit_file.read_text()
    assert SECRET not in attack.emit_file.read_text()
    assert SECRET not in attack.report


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_connect_to_a_filesystem_unix_socket(attack) -> None:
    require(attack.document, "mount")
    assert attack.accepted is None
    assert "socket: ok" not in attack.emit_file.read_text()


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_cannot_reach_host_sysv_shared_memory(attack) -> None:
    require(attack.document, "ipc")
    text = attack.emit_file.read_text()
    assert "host-shm: " in text and "host-shm: ok" not in text


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_the_child_has_a_hostname_of_its_own(attack) -> None:
    require(attack.document, "uts")
    text = attack.emit_file.read_text()
    assert socket.gethostname() != HOSTNAME and f"hostname: {HOSTNAME}" in text


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_a_minimal_dev_without_kvm_console_or_tty(attack) -> None:
    require(attack.document, "mount")
    text = attack.emit_file.read_text()
    for device in ("kvm", "console", "dev-tty"):
        assert f"{device}: " in text and f"{device}: ok" not in text, device
    assert "stdin-tty: False" in text


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_no_descendant_survives_the_run(attack) -> None:
    require(attack.document, "pid")
    assert "daemon: ok" in attack.emit_file.read_text()  # it did start them
    assert attack.survivors == []


@pytest.mark.slow  # the hostile head's emit: children spawned
def test_protections_are_recorded_per_revision(attack) -> None:
    for label in ("base", "head"):
        children = attack.document["revisions"][label]["work"]["children"]
        assert children == (1 if attack.jobs == 2 else children) and children >= 1
        if attack.jobs > 2:
            assert children >= 3  # the planning child and one per group, each jailed
        record = attack.document["revisions"][label]["protections"]
        assert set(record) >= {"network", "pid", "mount", "detail"}
        assert attack.document["revisions"][label]["network_isolated"] == record["network"]


@pytest.mark.slow  # children spawned
def test_missing_protections_are_recorded_when_namespaces_are_off(build) -> None:
    repo = build(Scenario(base=TREE))
    document = run_emit(open_views(repo.path, commit="base"), load_surface_map(),
                        isolate=False)
    validate(document, "emit.schema.json")
    for label in ("base", "head"):
        revision = document["revisions"][label]
        assert revision["status"] == "done", revision["reason"]
        record = revision["protections"]
        assert not (record["network"] or record["pid"] or record["mount"])
        assert record["detail"] and revision["network_isolated"] is False


# ---------------------------------------------------------------------------
# The child's output is read through a bounded buffer
# ---------------------------------------------------------------------------

RUN_EMIT = """
import json, resource, sys
from emit.children import Limits
from emit.runner import run_emit
from emit.sandbox import HOSTNAME
from impact.git import open_views
from impact.surface import load_surface_map
views = open_views(sys.argv[1], base="base", head="head")
document = run_emit(views, load_surface_map(), limits=Limits(family_budget=120, timeout=300))
head = document["revisions"]["head"]
print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "status": head["status"], "reason": head["reason"],
                  "families": [f["status"] for f in (head["result"] or {}).get("families", [])]}))
"""

FLOOD_MB = 300


def _emit_rss(repo: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN_EMIT, str(repo)], capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # children spawned
def test_a_child_flooding_stderr_does_not_grow_the_parent(build) -> None:
    flood = hostile(f"""
        import sys as _sys
        _chunk = (b"e" * 1023 + b"\\n") * 1024
        for _ in range({FLOOD_MB}):
            _sys.stderr.buffer.write(_chunk)
        _sys.stderr.flush()
        """)
    quiet = _emit_rss(build(Scenario(base=TREE, head=(hostile("_QUIET = 1\n"),))).path)
    loud = _emit_rss(build(Scenario(base=TREE, head=(flood,))).path)
    assert loud["status"] == "done", loud["reason"]
    assert "built" in loud["families"]
    grown_mb = (loud["rss_kb"] - quiet["rss_kb"]) / 1024
    assert grown_mb < 32, f"the parent grew by {grown_mb:.0f} MB for a {FLOOD_MB} MB stream"


# ---------------------------------------------------------------------------
# Signals and the parent's death end the child tree and remove the temp folder
# ---------------------------------------------------------------------------

SLEEPER = """
import os as _os, subprocess as _sp, sys as _sys, time as _time
from pathlib import Path as _Path
_sp.Popen([_sys.executable, "-c", "import time; time.sleep(600)", {marker!r}])
_Path(_os.environ["HOME"], "started").write_text("1")
_time.sleep(600)
"""


def _impact(*args: str, env: dict, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "impact", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)


@pytest.mark.parametrize(("command", "how"), [
    ("emit", "SIGTERM"), ("emit", "SIGINT"), ("emit", "SIGKILL"),
    ("report --run-emit", "SIGTERM"),  # the same runner; one signal shows the path holds
    # Several children per revision (a planning child, then one per group of families):
    # every child tree and every scratch folder goes, whichever child holds the sleeper.
    ("emit --jobs 6", "SIGTERM"), ("emit --jobs 6", "SIGINT"), ("emit --jobs 6", "SIGKILL"),
])
@pytest.mark.slow  # children spawned
def test_signals_and_the_parents_death_end_the_child_tree(build, tmp_path, how,
                                                          command) -> None:
    marker = f"impact-sandbox-{how}-{os.getpid()}-{command.replace(' ', '')}"
    repo = build(Scenario(base=TREE, head=(hostile(SLEEPER.format(marker=marker)),)))
    temp = tmp_path / "temp-root"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    args = ["--repo", str(repo.path), "--base", "base", "--head", "head"]
    if command.startswith("emit"):
        args = ["emit", *args, *command.split()[1:], "-o", str(tmp_path / "emit.json"),
                "--timeout", "600", "--family-budget", "300", "--no-cache"]
    else:
        args = ["report", *args, "--run-emit", "--jobs", "2", "--no-cache"]
    process = _impact(*args, env=env)
    try:
        # HOME is the scratch folder of the child: <temp>/head-<part>/home
        started = wait_until(lambda: any(temp.glob("impact-emit-*/head-*/home/started")), 120)
        assert started, "the hostile builder never started"
        assert wait_until(lambda: processes_with(marker), 10)
        process.send_signal(getattr(signal, how))
        process.wait(timeout=60)
        assert wait_until(lambda: not processes_with(marker), 10), "a grandchild survived"
        assert wait_until(lambda: not processes_with(str(temp)), 10), "a child survived"
        assert wait_until(lambda: not any(temp.iterdir()), 10), list(temp.iterdir())
        if how != "SIGKILL":
            assert process.returncode != 0
    finally:
        process.kill()
        process.wait()
        kill_all(marker)
        kill_all(str(temp))


# ---------------------------------------------------------------------------
# Resource limits within the hard limits
# ---------------------------------------------------------------------------

ADDRESS_SPACE_HARD = 6 << 30  # below the 8 GiB a child asks for


def _lower_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_HARD, ADDRESS_SPACE_HARD))


@pytest.mark.slow  # children spawned
def test_emit_under_a_lower_address_space_hard_limit(build, tmp_path) -> None:
    repo = build(Scenario(base=TREE))
    out = tmp_path / "emit.json"
    done = subprocess.run([sys.executable, "-m", "impact", "emit", "--repo", str(repo.path),
                           "--commit", "base", "-o", str(out)], capture_output=True, text=True,
                          timeout=300, preexec_fn=_lower_address_space)
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert {r["status"] for r in document["revisions"].values()} == {"done"}


def test_limits_never_ask_beyond_the_hard_limit() -> None:
    from emit.sandbox import within_hard

    unlimited = resource.RLIM_INFINITY
    assert within_hard(8 << 30, unlimited) == 8 << 30
    assert within_hard(8 << 30, 6 << 30) == 6 << 30
    assert within_hard(1024, 4096) == 1024


# ---------------------------------------------------------------------------
# What is hidden and what is kept
# ---------------------------------------------------------------------------


def test_hidden_paths_cover_home_temp_run_and_the_git_folder(build, tmp_path) -> None:
    from emit.jail import hidden_paths

    repo = build(Scenario(base={"a.txt": "a\n"}))
    home = tmp_path / "home"
    home.mkdir()
    temp_root = tmp_path / "impact-emit-x"
    temp_root.mkdir()
    hidden = hidden_paths(open_views(repo.path, commit="base"), temp_root,
                          {"HOME": str(home)})
    assert {str(home), str(temp_root), str(repo.path), str(repo.path / ".git")} <= set(hidden)
    assert {"/tmp", "/root"} <= set(hidden)
    assert os.path.realpath("/run") in hidden
    assert "/" not in hidden


def test_kept_paths_never_bring_back_the_current_folder(tmp_path, monkeypatch) -> None:
    from emit.jail import kept_paths

    secret_folder = tmp_path / "home"
    secret_folder.mkdir()
    monkeypatch.chdir(secret_folder)
    monkeypatch.syspath_prepend(str(secret_folder))  # as `python -m impact` run from there
    kept = dict(kept_paths(tmp_path / "work"))
    assert kept[str(tmp_path / "work")] is True
    assert str(secret_folder) not in kept
    assert os.path.realpath(sys.base_prefix) in kept  # the interpreter, read-only
    assert not any(kept[p] for p in kept if p != str(tmp_path / "work"))


def test_bounded_output_keeps_both_ends_and_the_progress() -> None:
    from emit.children import BoundedOutput

    out = BoundedOutput(1024)
    out.feed(b"first line\nprogress 1/4\n")
    for _ in range(1000):
        out.feed(b"x" * 1000 + b"\n")
    out.feed(b"progr")
    out.feed(b"ess 3/4\nlast words\n")
    assert len(out.head) + len(out.tail) <= 2048
    assert out.progress == "3/4"
    lines = out.lines()
    assert lines[0] == "first line" and lines[-1] == "last words"
    assert any("bytes left out" in line for line in lines)

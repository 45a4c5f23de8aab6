"""The emitter's jail: confines one child before it runs the analysed code, and cleans up
after a parent that died.

Run by emit/children.py as a script, with the standard library only (``python -I -S``):
it must import nothing of impact's and nothing an analysed tree could shadow.

``sandbox.py run CONFIG -- ARGV...``
    Bounds the resources (never above the hard limits this process inherited), asks the
    kernel to kill it when the parent dies, then, where the OS allows it without
    privileges, enters new user, mount, PID, network, IPC and UTS namespaces (no host
    SysV IPC or POSIX message queues, a hostname of its own) and a session keyring of its
    own. A tiny init (PID 1 of the new PID namespace) makes the whole file system
    read-only except the child's own scratch folders, lays empty read-only tmpfs over the
    folders that hold secrets and sockets (the user's home, /root, /tmp, /run, the
    analysed repository ...), gives it a minimal /dev (null, zero, full, random, urandom
    and the device nodes the caller names, such as a GPU's; no tty, console, kvm or
    disks) and re-exposes what the child needs (its scratch folder, the Python
    installation) through bind mounts; it then drops every capability and runs ARGV,
    reaps, and exits with ARGV's status. When the init exits, the kernel kills everything
    left in its PID namespace: no descendant outlives the child. What it obtained is
    written as a JSON line to the status descriptor the parent passed (closed before ARGV
    runs, so the analysed code cannot forge it), and ARGV's own wait status (its exit
    code, or the signal that ended it) as a second line once ARGV is gone. SIGTERM to this
    process ends the whole tree.

``sandbox.py watch PATH``
    Waits for end of file on stdin (the parent holds the only write end, so this comes
    however the parent ends, SIGKILL included), then removes PATH.

Maintainers: nothing here may depend on the analysed code's cooperation; every step
before the exec runs with the parent's trust.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
LOCKED_FLAGS = tuple((getattr(os, st, 0), ms) for st, ms in (
    ("ST_NOSUID", MS_NOSUID), ("ST_NODEV", MS_NODEV), ("ST_NOEXEC", MS_NOEXEC)))
LINUX = sys.platform.startswith("linux")  # elsewhere: limits only, and a record saying so
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAP_VERSION_3 = 0x20080522
ISOLATED = CLONE_NEWIPC | CLONE_NEWUTS  # no host SysV IPC, message queues or hostname
# Tried in order; the first the kernel grants is kept. A caller that lets the child reach
# the network (a package install) has CLONE_NEWNET taken out of each.
ATTEMPTS = (
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | ISOLATED,
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET,
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET,
    CLONE_NEWUSER | CLONE_NEWNET,
    # a privileged caller without user namespaces
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | ISOLATED,
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET,
    CLONE_NEWNET,
)
HOSTNAME = "impact-sandbox"  # the child's own, in its UTS namespace
# The device nodes every child gets in its minimal /dev (bound from the host's).
BASIC_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2"}
# keyctl(2), for a session keyring of the child's own (libc has no wrapper for it).
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "ppc64le": 311, "s390x": 280}
KEYCTL_JOIN_SESSION_KEYRING = 1
EXIT_SETUP = 111  # the jail could not be set up; ARGV never ran
HIDDEN_TMPFS = "mode=0755,size=1m"

_libc = ctypes.CDLL(None, use_errno=True)


def within_hard(want: int, hard: int) -> int:
    """The most of `want` a process may ask for under the hard limit `hard`."""
    return want if hard == resource.RLIM_INFINITY else min(want, hard)


def apply_limits(limits: dict[str, int]) -> None:
    """Lower each limit to `limits` (soft and hard), never above the inherited hard limit."""
    for name, want in limits.items():
        which = getattr(resource, "RLIMIT_" + name.upper())
        _, hard = resource.getrlimit(which)
        value = within_hard(want, hard)
        resource.setrlimit(which, (value, value))


def _call(name: str, *args) -> None:
    if getattr(_libc, name)(*args) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")


def _prctl(*args: int) -> None:
    _call("prctl", *[ctypes.c_ulong(a) for a in args])


def die_with_parent() -> None:
    """SIGKILL this process when the thread that started it ends."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    def arg(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    code = _libc.mount(arg(source), arg(target), arg(fstype), ctypes.c_ulong(flags), arg(data))
    if code != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"mount {target}: {os.strerror(number)}")


# ---------------------------------------------------------------------------
# Namespaces
# ---------------------------------------------------------------------------


def attempts(network: bool) -> tuple[int, ...]:
    """ATTEMPTS, less the network namespace where the caller lets the child reach the
    network (each attempt once, in order)."""
    if not network:
        return ATTEMPTS
    return tuple(dict.fromkeys(flags & ~CLONE_NEWNET for flags in ATTEMPTS if flags
                               & ~CLONE_NEWNET))


def enter_namespaces(network: bool = False) -> tuple[int, str | None]:
    """Unshare the first set of namespaces the kernel grants; (flags, why not more)."""
    refused = None
    tried = attempts(network)
    for flags in tried:
        if flags & CLONE_NEWUSER == 0 and os.geteuid() != 0:
            continue
        uid, gid = os.getuid(), os.getgid()
        if _libc.unshare(ctypes.c_int(flags)) != 0:
            refused = refused or os.strerror(ctypes.get_errno())
            continue
        if flags & CLONE_NEWUSER:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        if flags != tried[0]:
            return flags, f"the kernel refused unprivileged namespaces ({refused})"
        return flags, None
    return 0, f"the kernel refused every namespace ({refused})"


def own_keyring() -> str | None:
    """Join a new, empty session keyring (the parent's keys out of reach); why not."""
    import platform

    number = SYS_KEYCTL.get(platform.machine())
    if number is None:
        return f"no session keyring of its own (keyctl unknown on {platform.machine()})"
    if _libc.syscall(ctypes.c_long(number), ctypes.c_int(KEYCTL_JOIN_SESSION_KEYRING),
                     ctypes.c_void_p(None)) < 0:
        return f"no session keyring of its own ({os.strerror(ctypes.get_errno())})"
    return None


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def drop_privileges() -> None:
    """No capability survives the exec, and no set-user-ID program can grant one."""
    for cap in range(64):
        refused = _libc.prctl(ctypes.c_ulong(PR_CAPBSET_DROP), ctypes.c_ulong(cap), 0, 0, 0)
        if refused and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    _libc.prctl(ctypes.c_ulong(PR_CAP_AMBIENT), ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header, data = Header(CAP_VERSION_3, 0), (Data * 2)()
    _call("capset", ctypes.byref(header), ctypes.byref(data))
    _prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


# ---------------------------------------------------------------------------
# The file system
# ---------------------------------------------------------------------------


def _open_devices(wanted: list[str] | None, notes: list[str]) -> list[tuple[str, int]] | None:
    """Descriptors of the device nodes (or folders of them: /dev/dri) the minimal /dev
    brings back, taken before anything covers /dev; None keeps the host's /dev."""
    if wanted is None:
        return None
    found = []
    for path in dict.fromkeys([*BASIC_DEVICES, *wanted]):
        if not _under(path, "/dev") or ".." in path.split("/"):
            notes.append(f"not a device path: {path}")
            continue
        try:
            found.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)))
        except OSError as exc:
            if path in BASIC_DEVICES or os.path.lexists(path):
                notes.append(f"no {path} in /dev: {exc.strerror}")
    return found


def minimal_dev(devices: list[tuple[str, int]], *, writable_shm: bool) -> None:
    """A new /dev holding only `devices` (bound from the host's), the /proc/self/fd
    links, an empty /dev/shm (writable only when asked) and nothing else: no tty, pts,
    console, kvm, disks or /dev/mem."""
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for path, fd in devices:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        os.makedirs(path if is_dir else os.path.dirname(path), exist_ok=True)
        if not is_dir:
            open(path, "a").close()
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | (0 if writable_shm else
                                                                 MS_RDONLY),
           "mode=1777,size=1g" if writable_shm else HIDDEN_TMPFS)
    remount("/dev", read_only=True)


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_points() -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
        return sorted({_unescape(line.split()[4]) for line in handle if line.strip()})


def _locked(path: str) -> int:
    """The per-mount flags an unprivileged remount must repeat (nosuid, nodev, noexec)."""
    flags = os.statvfs(path).f_flag
    return sum(ms for st, ms in LOCKED_FLAGS if flags & st)


def remount(path: str, *, read_only: bool) -> None:
    flags = MS_REMOUNT | MS_BIND | _locked(path) | (MS_RDONLY if read_only else 0)
    _mount(None, path, None, flags)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def confine_filesystem(config: dict, *, new_proc: bool) -> list[str]:
    """Everything read-only, the hidden folders empty, the kept ones back; the notes."""
    notes: list[str] = []
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Descriptors of what the child needs, taken before anything covers them.
    keeps = []
    for path, writable in config["keep"]:
        try:
            keeps.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC), writable))
        except OSError as exc:
            notes.append(f"not kept {path}: {exc.strerror}")
    devices = _open_devices(config.get("dev"), notes)
    failed = []
    for point in mount_points():
        if _under(point, "/proc"):
            continue  # covered below by a fresh proc (or an empty tmpfs)
        try:
            if not os.statvfs(point).f_flag & os.ST_RDONLY:
                remount(point, read_only=True)
        except OSError as exc:
            failed.append(f"{point} ({exc.strerror})")
    hidden = []
    for path in sorted(config["hide"]):
        if any(_under(path, h) for h in hidden) or not os.path.isdir(path):
            continue
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, HIDDEN_TMPFS)
        hidden.append(path)
    for path, fd, writable in sorted(keeps):
        covered = any(_under(path, h) for h in hidden)
        if covered:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
        if covered or writable:
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        if writable:
            remount(path, read_only=False)
        os.close(fd)
    for path in config["read_only"]:
        _mount(path, path, None, MS_BIND | MS_REC)
        remount(path, read_only=True)
    for path in hidden:
        if path not in {k[0] for k in keeps}:
            remount(path, read_only=True)
    if devices is not None:
        minimal_dev(devices, writable_shm=bool(config.get("shm")))
    try:
        if not new_proc:
            raise OSError(errno.EPERM, "no PID namespace of its own")
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError as exc:
        # The old /proc would show the analyser's processes (and their environments).
        _mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
               "mode=0555,size=4k")
        notes.append(f"/proc hidden, not replaced ({exc.strerror})")
    if failed:  # the rest is in place; the record says the file system is not confined
        raise OSError(errno.EPERM, "cannot make read-only: " + ", ".join(failed))
    return notes


# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------


def _status_of(code: int) -> int:
    """A wait status as a shell would report it (128 + N for signal N)."""
    if os.WIFEXITED(code):
        return os.WEXITSTATUS(code)
    return 128 + os.WTERMSIG(code) if os.WIFSIGNALED(code) else EXIT_SETUP


def _parent_gone(lifeline: int) -> bool:
    return bool(select.select([lifeline], [], [], 0)[0])  # readable = every writer closed


def _exec(argv: list[str], config: dict) -> None:
    try:
        with contextlib.suppress(OSError):
            os.close(config["status_fd"])  # the jail's record is not the child's to write
        os.chdir(config["cwd"])
        if LINUX:
            drop_privileges()
        os.execv(argv[0], argv)
    except BaseException as exc:  # never fall back into the jail's own code
        os.write(2, f"sandbox: cannot run the child: {exc}\n".encode())
    os._exit(EXIT_SETUP)


def _wait_record(code: int) -> str:
    """ARGV's wait status as the jail's second line: its exit code or its signal."""
    if os.WIFSIGNALED(code):
        return json.dumps({"signal": os.WTERMSIG(code)}) + "\n"
    return json.dumps({"code": _status_of(code)}) + "\n"


def _init(config: dict, argv: list[str], record: dict, flags: int, lifeline: int) -> None:
    """PID 1 of the new PID namespace (or the child itself without one)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if LINUX:
        die_with_parent()
    if _parent_gone(lifeline):
        os._exit(EXIT_SETUP)
    notes = [record["detail"]] if record["detail"] else []
    if flags & CLONE_NEWUTS:
        try:
            socket_hostname(HOSTNAME)
        except OSError as exc:
            notes.append(f"hostname not set: {exc.strerror}")
    if LINUX:
        record["keyring"] = (why := own_keyring()) is None
        if why:
            notes.append(why)
    if flags & CLONE_NEWNS:
        try:
            notes += confine_filesystem(config, new_proc=bool(flags & CLONE_NEWPID))
            record["mount"] = True
        except OSError as exc:
            notes.append(f"file system not confined: {exc}")
    elif config["namespaces"]:
        notes.append("no mount namespace: the file system is as the analyser sees it")
    if not flags & CLONE_NEWPID and config["namespaces"]:
        notes.append("no PID namespace: a daemon the child starts may outlive it")
    record["detail"] = "; ".join(notes) or None
    os.write(config["status_fd"], (json.dumps(record) + "\n").encode())
    if not flags & CLONE_NEWPID:
        _exec(argv, config)  # the jail's outer process writes the wait status
    child = os.fork()
    if child == 0:
        die_with_parent()  # a PID namespace: Linux
        _exec(argv, config)
    while True:
        try:
            pid, code = os.wait()
        except ChildProcessError:
            os._exit(EXIT_SETUP)
        if pid == child:
            with contextlib.suppress(OSError):
                os.write(config["status_fd"], _wait_record(code).encode())
            os._exit(_status_of(code))  # the kernel ends the rest of the namespace


def socket_hostname(name: str) -> None:
    """sethostname(2) in the child's own UTS namespace."""
    data = name.encode()
    _call("sethostname", data, ctypes.c_size_t(len(data)))


class _Terminate(Exception):
    pass


def _terminate(*_: object) -> None:
    raise _Terminate


def run(config: dict, argv: list[str]) -> None:
    if LINUX:
        die_with_parent()
    if os.getppid() != config["parent"]:
        os._exit(EXIT_SETUP)  # the parent died before the line above
    apply_limits(config["limits"])
    record = {"user": False, "network": False, "pid": False, "mount": False, "detail": None}
    flags = 0
    if not LINUX:
        record["detail"] = f"no namespaces on {sys.platform}"
    elif config["namespaces"]:
        flags, record["detail"] = enter_namespaces(bool(config.get("network")))
    else:
        record["detail"] = "namespaces turned off by the caller"
    record.update(user=bool(flags & CLONE_NEWUSER), network=bool(flags & CLONE_NEWNET),
                  pid=bool(flags & CLONE_NEWPID), ipc=bool(flags & CLONE_NEWIPC),
                  uts=bool(flags & CLONE_NEWUTS), keyring=False)
    if LINUX:  # the analysed code (this process's child) cannot read this one's descriptors
        with contextlib.suppress(OSError):
            _prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    lifeline, keep_alive = os.pipe()
    signal.signal(signal.SIGTERM, _terminate)
    child = -1
    try:
        child = os.fork()
        if child == 0:
            try:
                os.close(keep_alive)
                _init(config, argv, record, flags, lifeline)
            except BaseException as exc:
                os.write(2, f"sandbox: {exc}\n".encode())
            finally:
                os._exit(EXIT_SETUP)
        os.close(lifeline)
        _, code = os.waitpid(child, 0)
        if not flags & CLONE_NEWPID:  # the child ran ARGV itself: this is ARGV's status
            with contextlib.suppress(OSError):
                os.write(config["status_fd"], _wait_record(code).encode())
        os.close(config["status_fd"])
    except _Terminate:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if child > 0:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)  # returns once the whole PID namespace is gone
        os.killpg(0, signal.SIGKILL)  # without one: the rest of the process group
    os._exit(_status_of(code))


# ---------------------------------------------------------------------------
# watch
# ---------------------------------------------------------------------------


def _writable(function, path, _exc) -> None:
    """rmtree's error hook: a folder the child made unreadable is opened up and retried.
    Only real folders are opened up (never what a symlink points at: `os.chmod` follows
    links); a link, or any other entry, is only unlinked."""
    try:
        parent = os.path.dirname(path)
        if stat.S_ISDIR(os.lstat(parent).st_mode):
            os.chmod(parent, 0o700)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, 0o700)
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        return


def remove(path: str) -> None:
    shutil.rmtree(path, onerror=_writable)


def watch(path: str) -> None:
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    while os.read(0, 4096):
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if os.path.lexists(path):
            with contextlib.suppress(OSError):
                remove(path)
        time.sleep(0.2)  # a child still dying may write once more
        if not os.path.lexists(path):
            return


def main(argv: list[str]) -> None:
    if argv[:1] == ["watch"] and len(argv) == 2:
        watch(argv[1])
        return
    if argv[:1] == ["run"] and len(argv) > 3 and argv[2] == "--":
        run(json.loads(argv[1]), argv[3:])
        return
    sys.exit("usage: sandbox.py run CONFIG -- ARGV... | sandbox.py watch PATH")


if __name__ == "__main__":
    main(sys.argv[1:])

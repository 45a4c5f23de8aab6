"""What the tree code of each window read under the tree, for the parent's cache of built
groups (``--reads FILE``).

From the child's first line it records every path under ``--tree`` that Python code opens
(the "open" audit event: builtins, io, os.open, and the import system's source loads),
stats (``os.stat``, ``os.lstat``, ``os.access`` and ``os.open`` wrapped, so existence checks
and the import system's probes count, and a path relative to a folder descriptor is read as
the path it names), lists (``os.listdir``: names) or scans (``os.scandir``: names, kinds
and, for files, content, as a DirEntry may stat them), in windows: ``plan`` (everything
before the first family: the flavor ladder, the enumerator) and one per group (source
module and arch) around each of its families' builds and predicate tables, the tree modules
left in ``sys.modules`` added. A window in which a process was started, a foreign library
called (ctypes), a tree file opened for writing, or a descriptor that names no folder is
``opaque``: what it read cannot be listed, and the parent keys it by the whole roots. The
reads file is written beside ``--out`` and never changes the document. Not seen: what a C
extension outside the tree reads by itself.

Maintainers: standard library only, and no other module of the child: the recorder is
installed before anything else runs (tests load this file on its own). Schema:
impact/contracts/emit_reads.schema.json.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

READS_VERSION = 1


class Reads:
    """What the tree code of each window read under the tree (module docstring)."""

    OPAQUE = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
              "os.forkpty", "os.spawn", "pty.spawn", "ctypes.dlopen", "ctypes.call_function",
              "ctypes.dlsym")

    def __init__(self, tree: Path) -> None:
        self.tree = str(tree)
        self.prefix = self.tree + os.sep
        self.windows: dict[str, dict] = {}
        self.current: dict | None = None
        self.window("plan")

    def window(self, name: str | None) -> None:
        """Record into window `name` from now (None: record nothing)."""
        if name is None:
            self.current = None
            return
        self.current = self.windows.setdefault(name, {
            "paths": set(), "listed": set(), "scanned": set(), "opaque": None})
        import linecache  # file text cached by one window must be read again by the next
        linecache.clearcache()

    def _rel(self, path) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return None
        full = os.path.normpath(os.path.join(os.getcwd(), path))
        if full == self.tree:
            return ""
        return full[len(self.prefix):] if full.startswith(self.prefix) else None

    def opaque(self, why: str) -> None:
        if self.current is not None and self.current["opaque"] is None:
            self.current["opaque"] = why

    def note(self, kind: str, path) -> None:
        if self.current is None:
            return
        if isinstance(path, int):
            if kind == "paths":  # a file already open: its opening was seen
                return
            try:  # a folder listed through a descriptor: the folder it names
                path = os.readlink(f"/proc/self/fd/{path}")
            except OSError:
                self.opaque(f"{kind} by a file descriptor that names no folder")
                return
        try:
            rel = self._rel(os.fspath(path))
        except (TypeError, ValueError, OSError):
            self.opaque("a path that cannot be read")
            return
        if rel is not None:
            self.current[kind].add(rel)

    def note_at(self, path, dir_fd) -> None:
        """A path given to a call that may take it relative to a folder descriptor."""
        if dir_fd is None or isinstance(path, int):
            self.note("paths", path)
            return
        try:
            path = os.fsdecode(path)
            if not os.path.isabs(path):
                path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        except (OSError, TypeError, ValueError):
            self.opaque("a path relative to a folder descriptor that names no folder")
            return
        self.note("paths", path)

    def hook(self, event: str, args: tuple) -> None:
        if self.current is None:
            return
        if event == "open":
            path, flags = args[0], args[2] if len(args) > 2 else 0
            self.note("paths", path)
            writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
            if isinstance(flags, int) and flags & writing and not isinstance(path, int):
                try:
                    inside = self._rel(os.fspath(path)) is not None
                except (TypeError, ValueError):
                    inside = True
                if inside:
                    self.opaque("a tree file opened for writing")
        elif event == "os.listdir":
            self.note("listed", args[0] if args[0] is not None else ".")
        elif event == "os.scandir":
            self.note("scanned", args[0] if args[0] is not None else ".")
        elif event.startswith(self.OPAQUE):
            self.opaque(event)

    def install(self) -> None:
        """The audit hook, and the stat calls wrapped (in os and posix, where the import
        system calls them)."""
        sys.addaudithook(self.hook)
        import posix

        def wrap(real):
            @functools.wraps(real)
            def wrapped(path, *args, **kwargs):
                self.note_at(path, kwargs.get("dir_fd"))
                return real(path, *args, **kwargs)
            return wrapped

        for name in ("stat", "lstat", "access", "open"):
            real = getattr(posix, name)
            wrapped = wrap(real)
            setattr(posix, name, wrapped)
            if getattr(os, name, None) is real:
                setattr(os, name, wrapped)

    def add_modules(self, names: list[str]) -> None:
        """The files of the tree modules `names` now in sys.modules (belt and braces: their
        loads were opened, so seen already)."""
        for name in names:
            self.note("paths", getattr(sys.modules.get(name), "__file__", None))

    def document(self) -> dict:
        return {"schema_version": READS_VERSION, "windows": {
            name: {"paths": sorted(w["paths"]), "listed": sorted(w["listed"]),
                   "scanned": sorted(w["scanned"]), "opaque": w["opaque"]}
            for name, w in sorted(self.windows.items())}}


def window(reads: Reads | None, name: str | None) -> None:
    """Record into window `name` of `reads` from now, when the child records reads."""
    if reads is not None:
        reads.window(name)

"""Reading a file another process wrote (an emitter child, an earlier run's cache), without
trusting what it left at that path; and which tree paths the parent may write at all.

Maintainers: one function, standard library only. The path is opened without following a
final symlink and without blocking (a FIFO whose writer never comes opens at once), the
open file must be a regular file, and at most `limit` bytes are read: a FIFO, a socket, a
device (`/dev/zero`), a symlink to a secret or a file grown past the limit is refused
with `Unreadable`, an OSError, which every caller already treats as a missing file (a
cache miss; a child that failed). `unsafe_tree_path` names what is wrong with a path a git
tree holds that no checkout would write (dulwich stores any entry name).
"""

from __future__ import annotations

import os
import stat

_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))


class Unreadable(OSError):
    """The path holds something other than a regular file of at most the limit."""


def read_regular(path: str | os.PathLike[str], *, limit: int) -> bytes:
    """The bytes of the regular file at `path`, if it holds at most `limit` of them."""
    fd = os.open(path, _FLAGS)  # a final symlink: ELOOP
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"{os.fspath(path)} is not a regular file")
        if info.st_size > limit:
            raise Unreadable(f"{os.fspath(path)} holds more than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:  # the file may still grow: read one byte past the limit
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise Unreadable(f"{os.fspath(path)} holds more than {limit} bytes")
    finally:
        os.close(fd)


def unsafe_tree_path(path: str) -> str | None:
    """Why `path` (a tree path, '/'-separated) must not be written under a folder, or None:
    absolute, an empty, `.` or `..` part (a `/` inside an entry's name reads as parts too),
    a `.git` part in any case (git's own checkout refuses it), or a NUL byte."""
    if not path or "\0" in path:
        return "an empty path or a NUL byte"
    if path.startswith("/"):
        return "an absolute path"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return f"a {part!r} part" if part else "an empty part"
        if part.lower() == ".git":
            return "a .git part"
    return None

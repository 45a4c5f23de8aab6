"""Reading a file another process wrote (an emitter child, an earlier run's cache), without
trusting what it left at that path.

Maintainers: one function, standard library only. The path is opened without following a
final symlink and without blocking (a FIFO whose writer never comes opens at once), the
open file must be a regular file, and at most `limit` bytes are read: a FIFO, a socket, a
device (`/dev/zero`), a symlink to a secret or a file grown past the limit is refused
with `Unreadable`, an OSError, which every caller already treats as a missing file (a
cache miss; a child that failed).
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

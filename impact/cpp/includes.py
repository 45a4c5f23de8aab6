"""Include resolution: which known file an `#include` names, from path strings alone.

Maintainers: pure string work on paths handed in; must not touch git or the filesystem.
"""

from __future__ import annotations

import posixpath


def _norm(path: str) -> str:
    joined = posixpath.normpath(path)
    return "" if joined == "." else joined


def resolve_include(
    including_path: str,
    header: str,
    quoted: bool,
    existing_paths: set[str],
    include_roots: list[str],
) -> str | None:
    """The existing path an include names, or None when none of the candidates exists.

    A quoted include is tried beside the including file first, then under each include
    root in order; an angled include only under the roots. Paths are POSIX-style and
    normalised (`a/./b/../c` is `a/c`), so they match a snapshot's keys.
    """
    candidates: list[str] = []
    if quoted:
        candidates.append(posixpath.join(posixpath.dirname(including_path), header))
    candidates.extend(posixpath.join(root, header) for root in include_roots)
    for candidate in candidates:
        normal = _norm(candidate)
        if normal and not normal.startswith("../") and normal in existing_paths:
            return normal
    return None

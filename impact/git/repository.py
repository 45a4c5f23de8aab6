"""Open a repository, resolve revisions, find merge bases and read blobs.

Maintainers: reads only. Objects this tool creates (a merged tree, the tree of
uncommitted work) go to an in-memory store layered in front of the repository's
own, so the analysed repository is never written.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dulwich.errors import NotGitRepository
from dulwich.graph import find_merge_base
from dulwich.lru_cache import LRUSizeCache
from dulwich.object_store import MemoryObjectStore, OverlayObjectStore
from dulwich.objects import Blob, Commit, ShaFile, Tag, Tree
from dulwich.objectspec import AmbiguousShortId, parse_commit, parse_object
from dulwich.repo import Repo

from impact.errors import (
    DamagedRepository,
    ImpactError,
    NoMergeBase,
    NotARepository,
    ShallowHistory,
    UnknownRevision,
)
from impact.git.trees import Trees

BLOB_CACHE_BYTES = 64 * 1024 * 1024

T = TypeVar("T")


@dataclass(frozen=True)
class Revision:
    """A revision as the user spelled it and the commit it names."""

    spelled: str
    sha: str


class Repository:
    """A read-only view of one git repository plus a scratch object store."""

    def __init__(self, repo: Repo, path: Path) -> None:
        self.repo = repo
        self.path = path
        guard_store(repo.object_store, path)
        # Blob ids standing for work-tree files that could not be read -> why (`--worktree`).
        self.unreadable_work: dict[str, str] = {}
        # Work-tree paths skipped unread (a FIFO, socket or device; a folder not listed).
        self.skipped_work: dict[str, str] = {}
        self.scratch = MemoryObjectStore()
        # Reads look in the scratch store first, then the repository's store;
        # writes (merge results, worktree trees) land in the scratch store only.
        self.objects = OverlayObjectStore([self.scratch, repo.object_store], add_store=self.scratch)
        self._blobs: LRUSizeCache[bytes, bytes] = LRUSizeCache(
            max_size=BLOB_CACHE_BYTES, compute_size=len
        )
        self.shallow = frozenset(repo.get_shallow())
        # Close the packs when this object goes, or at exit before the interpreter tears
        # down the modules dulwich's own finaliser needs (it prints a traceback then).
        weakref.finalize(self, repo.close)
        # Snapshots and tree diffs read folders through here, one folder at a time.
        self.trees = Trees(self.objects, self.missing_object)

    def __getitem__(self, sha: bytes) -> ShaFile:
        try:
            return self.objects[sha]
        except KeyError:
            raise self.missing_object(sha.decode()) from None

    def missing_object(self, sha: str) -> ShallowHistory:
        """The error for an object this clone lacks: shallow history or a partial clone."""
        if self.shallow:
            return ShallowHistory(
                f"object {sha} is not in this shallow clone",
                "fetch more history (git fetch --unshallow) and run again",
            )
        return ShallowHistory(
            f"object {sha} is missing from the repository (a partial clone?)",
            "fetch the missing objects (git fetch --refetch) and run again",
        )

    def read_blob(self, sha: str) -> bytes:
        """The content of one blob, cached by id so each is read once per run."""
        key = sha.encode()
        cached = self._blobs.get(key)
        if cached is not None:
            return cached
        why = self.unreadable_work.get(sha)
        if why is not None:
            raise OSError(why)
        obj = self[key]
        if not isinstance(obj, Blob):
            raise TypeError(f"{sha} is a {obj.type_name.decode()}, not a blob")
        data = obj.as_raw_string()
        self._blobs[key] = data
        return data

    def commit(self, sha: str) -> Commit:
        obj = self[sha.encode()]
        if not isinstance(obj, Commit):
            raise TypeError(f"{sha} is not a commit")
        return obj

    def tree(self, sha: str) -> Tree:
        obj = self[sha.encode()]
        if not isinstance(obj, Tree):
            raise TypeError(f"{sha} is not a tree")
        return obj

    def resolve(self, spelled: str) -> Revision:
        """Resolve a sha (full or short), branch, tag, remote branch, HEAD, X~n or X^."""
        # Resolve the name before any ~/^ suffix with parse_commit (which knows
        # refs and short shas), then let parse_object walk the suffix.
        cut = min((i for i in (spelled.find("~"), spelled.find("^")) if i >= 0), default=-1)
        name, suffix = (spelled[:cut], spelled[cut:]) if cut > 0 else (spelled, "")
        try:
            obj = parse_commit(self.repo, name.encode())
            if suffix:
                obj = parse_object(self.repo, obj.id + suffix.encode())
            while isinstance(obj, Tag):
                obj = self[obj.object[1]]
        except AmbiguousShortId:
            raise UnknownRevision(
                f"revision '{spelled}' is an ambiguous short sha",
                "give more characters of the sha",
            ) from None
        except ShallowHistory:
            raise
        except (KeyError, ValueError, IndexError):
            if self.shallow and ("~" in spelled or "^" in spelled):
                raise ShallowHistory(
                    f"revision '{spelled}' reaches past the history of this shallow clone",
                    "fetch more history (git fetch --unshallow) and run again",
                ) from None
            raise UnknownRevision(
                f"unknown revision '{spelled}'",
                "name a commit, branch, tag or remote branch that exists in the repository",
            ) from None
        if not isinstance(obj, Commit):
            raise UnknownRevision(
                f"revision '{spelled}' names a {obj.type_name.decode()}, not a commit",
                "name a commit, branch or tag",
            )
        return Revision(spelled=spelled, sha=obj.id.decode())

    def ref_names(self) -> list[str]:
        """Every ref of the repository, spelled in full (`refs/heads/x`), sorted; HEAD left
        out."""
        return sorted(name.decode() for name in self.repo.refs.allkeys() if name != b"HEAD")

    def merge_bases(self, a: str, b: str, *more: str) -> list[str]:
        """All best common ancestors of two commits, sorted; empty when none. With `more`,
        those of `a` and any of `b` and `more` (the merge bases of `a` with a merge of
        them)."""
        try:
            bases = find_merge_base(self.repo, [c.encode() for c in (a, b, *more)])
        except KeyError as exc:
            missing = exc.args[0] if exc.args else b"?"
            text = missing.decode() if isinstance(missing, bytes) else str(missing)
            raise self.missing_object(text) from None
        return sorted(base.decode() for base in bases)

    def merge_base(self, a: Revision, b: Revision) -> str:
        """The merge base used for a comparison; a clear error when there is none."""
        bases = self.merge_bases(a.sha, b.sha)
        if bases:
            return bases[0]
        if self.shallow:
            raise ShallowHistory(
                f"no merge base of '{a.spelled}' and '{b.spelled}' within this shallow clone",
                "fetch more history (git fetch --unshallow) and run again",
            )
        raise NoMergeBase(
            f"'{a.spelled}' and '{b.spelled}' share no history",
            "compare revisions of one line of history",
        )


_READS = ("get_raw", "contains_loose", "contains_packed")
"""The object store's methods every object read goes through (`store[sha]`, `sha in store`
and dulwich's own walks call them), guarded on the instance so internal calls are too."""


def guard_store(store: object, root: Path) -> None:
    """Make every read of `store` that fails for any reason but a missing object raise
    DamagedRepository (exit 3, or an `unreadable` row for a blob) instead of dulwich's
    ChecksumMismatch, AssertionError, zlib or permission error (exit 4 with a traceback).
    A missing object still raises KeyError, which the callers name as such."""
    for name in _READS:
        method = getattr(store, name, None)
        if method is not None:
            setattr(store, name, _guarded(method, root))


def _guarded(method: Callable[[bytes], T], root: Path) -> Callable[[bytes], T]:
    def read(sha: bytes) -> T:
        try:
            return method(sha)
        except (KeyError, ImpactError):
            raise
        except Exception as exc:  # any failure of the store itself: damage, not absence
            raise damaged(sha, exc, root) from exc
    return read


def damaged(sha: bytes | str, exc: BaseException, root: Path) -> DamagedRepository:
    """The error for an object the store holds but cannot give back."""
    text = sha.decode(errors="replace") if isinstance(sha, bytes) else sha
    why = (f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror
           else f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    return DamagedRepository(
        f"the object store of '{root}' could not be read at object {text} ({why})",
        "make .git/objects readable by this user, or repair the repository "
        "(git fsck names the damage; re-clone or fetch the damaged objects) and run again",
    )


def open_repository(path: str | os.PathLike[str]) -> Repository:
    """Open the repository at `path` (a work tree or a bare repository), or the one
    `path` lies inside, found upwards as git finds it from a subfolder."""
    root = Path(path)
    if not root.exists():
        raise NotARepository(f"'{root}' does not exist", "pass --repo the path of a git repository")
    try:
        try:
            repo = Repo(str(root))
        except NotGitRepository:
            repo = Repo.discover(str(root))
            root = Path(repo.path)
    except PermissionError as exc:
        raise NotARepository(
            f"'{root}' could not be read ({exc.strerror}: {exc.filename})",
            "run as a user who can read the repository, or make it readable",
        ) from None
    except NotGitRepository:
        raise NotARepository(
            f"'{root}' is not a git repository",
            "pass --repo the top folder of a git repository",
        ) from None
    return Repository(repo, root.resolve())

"""The persistent fact cache: facts of one file's blob, kept on disk between reports.

Maintainers: this module only stores and loads JSON entries under one folder; it never
parses a file (impact/extract.py decides what to store) and never reads git. Each entry is
`facts/<2 hex>/<sha256 of its key>.json` and holds its full key, so an entry is used only
when the key inside equals the key asked for: a truncated, corrupt, foreign or stale entry
is a miss, recomputed and overwritten, never trusted. Writes are atomic (a temporary file
renamed over the entry in the same folder), so concurrent reports only ever see whole
entries; an entry that disappears (another report evicted it) is a miss. A folder that
cannot be created or written turns the store off with one warning: a report never fails
for its cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

from impact.safefile import read_regular

# Bump when the entry layout changes: old entries then stop matching their keys.
ENTRY_FORMAT = 1
# Bump when what a tree classification entry holds changes.
INDEX_FORMAT = 1
DEFAULT_LIMIT_BYTES = 512 * 1024 * 1024
# After an eviction the store holds at most this share of its limit, so a full cache does
# not scan itself after every report.
_EVICT_TO = 0.8
# A temporary file older than this was left by a writer that died; eviction removes it.
_STALE_TMP_SECONDS = 3600.0
# A hit whose file is older than this gets its mtime refreshed (the LRU clock).
_TOUCH_AFTER_SECONDS = 3600.0
FACTS_FOLDER = "facts"
_TMP_PREFIX = ".tmp-"
# The most one entry may hold. An entry is read only as a regular file of at most this
# size, opened without following a symlink or blocking (impact/safefile.py): a FIFO, a
# device, a symlink or a huge file put in the cache folder is a miss, never a hang.
ENTRY_LIMIT_BYTES = 256 << 20

# What an extractor's output can depend on besides the blob, its path and the surface map:
# the source of every extractor package and of what they import from impact (the JSON
# schemas and the generic targets the descriptor readers check against), and the parsers.
_SOURCES = ("python", "cpp", "descriptors", "bindings", "builds", "dvc.py", "extract.py",
            "facts.py", "kinds.py", "sourcetext.py", "strict.py", "surface.py", "contracts")
_SOURCE_SUFFIXES = (".py", ".json")
_DISTRIBUTIONS = ("tree-sitter", "tree-sitter-cpp", "tree-sitter-cmake", "tree-sitter-cuda",
                  "PyYAML", "jsonschema")

Warn = Callable[[str], None]


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/impact`, or `~/.cache/impact` (a relative XDG_CACHE_HOME is
    ignored, as the XDG spec says)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "impact"


@cache
def extractor_version() -> str:
    """A digest of everything that can change an extractor's output for the same blob:
    impact's extractor sources and the parser versions. Computed once per process; raises
    OSError when a source file cannot be read (the store then stays off)."""
    return version_of(Path(__file__).resolve().parent)


def version_of(root: Path) -> str:
    """The extractor version of the impact package whose folder is `root`."""
    header = f"format {ENTRY_FORMAT}\npython {sys.version_info[0]}.{sys.version_info[1]}\n"
    return sources_digest(header, _DISTRIBUTIONS, root, extractor_sources(root))


def sources_digest(header: str, distributions: Iterable[str], root: Path,
                   files: Iterable[str]) -> str:
    """The sha256 of `header`, each distribution's installed version and each file under
    `root` (its relative path, then its content's sha256): what versions a cache's
    entries by the code that made them. Raises OSError when a file cannot be read."""
    digest = hashlib.sha256(header.encode())
    for name in distributions:
        digest.update(f"{name} {_distribution(name)}\n".encode())
    for relative in files:
        digest.update(f"{relative}\n".encode())
        digest.update(hashlib.sha256((root / relative).read_bytes()).digest())
    return digest.hexdigest()


def extractor_sources(root: Path) -> list[str]:
    """The files, relative to impact's folder `root`, whose source the extractor version
    covers, sorted."""
    found: list[str] = []
    for name in _SOURCES:
        path = root / name
        if path.is_file():
            found.append(name)
        elif path.is_dir():
            found.extend(p.relative_to(root).as_posix() for p in path.rglob("*")
                         if p.suffix in _SOURCE_SUFFIXES and p.is_file()
                         and "__pycache__" not in p.parts)
        else:
            raise OSError(f"extractor source {path} is missing")
    return sorted(found)


def _distribution(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def entry_key(extractor: str, surface_sha256: str, path: str, blob: str) -> dict[str, Any]:
    """The full key an entry stores and is compared on."""
    return {"format": ENTRY_FORMAT, "extractor": extractor, "surface": surface_sha256,
            "path": path, "blob": blob}


def _key_digest(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()


def _stderr_warning(message: str) -> None:
    print(f"impact: warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class Usage:
    """What `impact cache info` prints: the folder, its entries and their bytes."""

    folder: Path
    entries: int
    size: int
    limit: int


class FactStore:
    """Facts as JSON-ready records (kind, name, line, data) by key, in one folder.

    `load` returns the records of an entry whose stored key equals the one asked for, or
    None; `save` writes one entry atomically. Over `limit` bytes (checked when the store
    closes, and every tenth of the limit written), the least recently used entries (by
    mtime; a hit refreshes an old mtime) are deleted."""

    # What a store of another kind (the emit and report stores) sets instead: its folder
    # under the cache root, its warning when it turns off, and whether its keys carry the
    # extractor version.
    FOLDER: ClassVar[str] = FACTS_FOLDER
    OFF_TEXT: ClassVar[str] = ("the fact cache is off for this run ({why}); "
                               "files are parsed afresh, with the same results")
    VERSIONED: ClassVar[bool] = True

    def __init__(self, root: Path | str, *, limit: int = DEFAULT_LIMIT_BYTES,
                 warn: Warn | None = None, create: bool = True) -> None:
        self.root = Path(root)
        self.folder = self.root / self.FOLDER
        self.limit = limit
        self._warn = warn or _stderr_warning
        self.enabled = True
        self.hits = self.misses = self.writes = 0
        self._written_since_check = 0
        self._version: str | None = None
        if not create:  # `impact cache info|clear`: look, never make the folder
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._off(f"cannot create {self.folder}: {exc.strerror or exc}")
            return
        if not self.VERSIONED:
            return
        try:
            self._version = extractor_version()
        except OSError as exc:
            self._off(f"cannot read impact's extractor sources to version it: {exc}")

    def _off(self, why: str) -> None:
        if self.enabled:
            self.enabled = False
            self._warn(self.OFF_TEXT.format(why=why))

    def key(self, surface_sha256: str, path: str, blob: str) -> dict[str, Any] | None:
        """The key of one file's facts, or None when the store is off."""
        if not self.enabled or self._version is None:
            return None
        return entry_key(self._version, surface_sha256, path, blob)

    def _file(self, key: dict[str, Any]) -> Path:
        digest = _key_digest(key)
        return self.folder / digest[:2] / f"{digest}.json"

    def load(self, key: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The records stored under `key`, or None (absent, unreadable, or not this key's)."""
        if not self.enabled:
            return None
        file = self._file(key)
        try:
            raw = read_regular(file, limit=ENTRY_LIMIT_BYTES)
            mtime = os.stat(file, follow_symlinks=False).st_mtime
        except OSError:  # absent, evicted meanwhile, or not a regular file
            self.misses += 1
            return None
        records = _records(raw, key)
        if records is None:
            self.misses += 1
            return None
        self.hits += 1
        if time.time() - mtime > _TOUCH_AFTER_SECONDS:
            with contextlib.suppress(OSError):
                os.utime(file)
        return records

    def holds(self, key: dict[str, Any]) -> bool:
        """Whether an entry is stored under `key` (not whether it will load)."""
        return self.enabled and self._file(key).is_file()

    def save(self, key: dict[str, Any], records_json: str) -> None:
        """Store `records_json` (the JSON text of a list of records) under `key`."""
        if not self.enabled:
            return
        file = self._file(key)
        text = f'{{"key":{json.dumps(key, sort_keys=True)},"facts":{records_json}}}'
        data = text.encode("utf-8")
        self._write(file, data)

    def get(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The value stored under `key`, or None (absent, unreadable, not this key's, or
        not the bytes that were written: the header's sha256 must match the value's).
        For the stores whose value is one JSON object (the emit and report stores)."""
        if not self.enabled:
            return None
        digest = _key_digest(key)
        try:
            raw = read_regular(self.folder / digest[:2] / f"{digest}.json",
                               limit=ENTRY_LIMIT_BYTES)
            header_bytes, _, body = raw.partition(b"\n")
            header = json.loads(header_bytes.decode("utf-8"))
            if not (isinstance(header, dict) and header.get("key") == key
                    and header.get("sha256") == hashlib.sha256(body).hexdigest()):
                raise ValueError("another key's entry, or damaged")
            value = json.loads(body.decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            self.misses += 1
            return None
        if not isinstance(value, dict):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: dict[str, Any], value: Mapping[str, Any], *,
            sort_keys: bool = True) -> None:
        """Store `value` under `key`, whole or not at all (a temporary file renamed);
        `sort_keys=False` keeps the value's own key order (a document a renderer walks)."""
        if not self.enabled:
            return
        digest = _key_digest(key)
        file = self.folder / digest[:2] / f"{digest}.json"
        body = json.dumps(value, sort_keys=sort_keys, separators=(",", ":")).encode("utf-8")
        header = {"key": key, "sha256": hashlib.sha256(body).hexdigest()}
        data = json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + body
        self._write(file, data)

    def _index_key(self, surface_sha256: str, tree_id: str, part: str,
                   ) -> dict[str, Any] | None:
        """The key of one part of a tree's classification (impact/index.py): the map and
        the tree, the extractor version (it covers surface.py) and dulwich's (wildmatch)."""
        if not self.enabled or self._version is None:
            return None
        return {"format": ENTRY_FORMAT, "index": INDEX_FORMAT, "extractor": self._version,
                "dulwich": _distribution("dulwich"), "surface": surface_sha256,
                "tree": tree_id, "part": part}

    def _load_pairs(self, key: dict[str, Any] | None) -> list[tuple[str, str]] | None:
        """The string pairs an index entry stored under `key` holds, or None."""
        if key is None:
            return None
        try:
            raw = read_regular(self._file(key), limit=ENTRY_LIMIT_BYTES)
        except OSError:  # absent, or not a regular file
            return None
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
        if (not isinstance(entry, dict) or set(entry) != {"key", "pairs"}
                or entry["key"] != key or not _string_pairs(entry["pairs"])):
            return None
        return [(a, b) for a, b in entry["pairs"]]

    def _save_pairs(self, key: dict[str, Any] | None, pairs: list[tuple[str, str]]) -> None:
        if key is None:
            return
        text = json.dumps({"key": key, "pairs": [list(p) for p in pairs]}, sort_keys=True)
        self._write(self._file(key), text.encode("utf-8"))

    def load_index(self, surface_sha256: str, tree_id: str) -> list[tuple[str, str]] | None:
        """Every surface path of tree `tree_id` with its kind, as `save_index` stored them
        for this map; None when absent, not whole or not this key's (then recomputed)."""
        return self._load_pairs(self._index_key(surface_sha256, tree_id, "paths"))

    def load_index_folders(self, surface_sha256: str, tree_id: str,
                           ) -> list[tuple[str, str]] | None:
        """The (path, tree id) of the folders the walk that classified `tree_id` entered,
        in walk order (a separate entry: only a walk of another tree reads it)."""
        return self._load_pairs(self._index_key(surface_sha256, tree_id, "folders"))

    def save_index(self, surface_sha256: str, tree_id: str, pairs: list[tuple[str, str]],
                   folders: list[tuple[str, str]]) -> None:
        """Store a tree's classification, (path, kind) for each surface path, and the
        (path, tree id) of the folders its walk entered, under the map and the tree id."""
        self._save_pairs(self._index_key(surface_sha256, tree_id, "folders"), folders)
        self._save_pairs(self._index_key(surface_sha256, tree_id, "paths"), pairs)

    def _write(self, file: Path, data: bytes) -> None:
        """Write `data` to `file` whole or not at all (a temporary file renamed); a folder
        that cannot be written turns the store off with a warning, never an error."""
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".json", dir=file.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, file)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            self._off(f"cannot write {self.folder}: {exc.strerror or exc}")
            return
        self.writes += 1
        self._written_since_check += len(data)
        if self._written_since_check > self.limit // 10:
            self.evict()

    def close(self) -> None:
        """Keep the size bound after a run that wrote entries."""
        if self.enabled and self._written_since_check:
            self.evict()

    def evict(self) -> None:
        """Delete least-recently-used entries until the store fits in `_EVICT_TO` of its
        limit (only when over the limit), and temporary files writers left behind."""
        self._written_since_check = 0
        entries = list(_entries(self.folder))
        total = sum(size for _, size, _ in entries)
        if total <= self.limit:
            return
        goal = int(self.limit * _EVICT_TO)
        for path, size, _ in sorted(entries, key=lambda e: e[2]):
            if total <= goal:
                break
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            total -= size

    def usage(self) -> Usage:
        entries = [e for e in _entries(self.folder) if not e[0].name.startswith(_TMP_PREFIX)]
        return Usage(self.root, len(entries), sum(size for _, size, _ in entries), self.limit)

    def clear(self) -> Usage:
        """Delete every entry; returns what there was."""
        before = self.usage()
        shutil.rmtree(self.folder, ignore_errors=True)
        return before


def _entries(folder: Path) -> Iterator[tuple[Path, int, float]]:
    """(path, size, mtime) of every file in the store, temporary files left by a dead
    writer removed on the way."""
    now = time.time()
    try:
        shards = list(os.scandir(folder))
    except OSError:
        return
    for shard in shards:
        if not shard.is_dir(follow_symlinks=False):
            continue
        try:
            files = list(os.scandir(shard.path))
        except OSError:
            continue
        for entry in files:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(_TMP_PREFIX) and now - st.st_mtime > _STALE_TMP_SECONDS:
                Path(entry.path).unlink(missing_ok=True)
                continue
            yield Path(entry.path), st.st_size, st.st_mtime


_RECORD_FIELDS = {"kind", "name", "line", "data"}


def _string_pairs(value: Any) -> bool:
    """Whether `value` is a list of two-string lists (an index entry's paths or folders)."""
    return isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
        for p in value)


def _records(raw: bytes, key: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The records of an entry when it is whole, well-formed and stored under `key`."""
    try:
        entry = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or set(entry) != {"key", "facts"} or entry["key"] != key:
        return None
    records = entry["facts"]
    if not isinstance(records, list):
        return None
    for record in records:
        if not (isinstance(record, dict) and set(record) == _RECORD_FIELDS
                and isinstance(record["kind"], str) and isinstance(record["name"], str)
                and type(record["line"]) is int and isinstance(record["data"], dict)):
            return None
    return records

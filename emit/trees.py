"""The folders a revision's child needs, as git tree ids and as files written out.

Maintainers: reads git objects only (a Snapshot), never the work tree; writes only into the
folder it is given (the revision's own, under the run's temporary folder). Which folders
comes from the surface map (its Python and descriptor roots), never spelled here.
"""

from __future__ import annotations

from pathlib import Path

from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore

from impact.git import Snapshot, Views
from impact.kinds import ViewName
from impact.surface import SurfaceMap

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def roots_of(surface: SurfaceMap) -> tuple[str, ...]:
    """The folders the child needs: the Python roots and the descriptor roots."""
    return tuple(sorted(set(surface.python_roots) | set(surface.descriptor_roots)))


def tree_ids(snapshot: Snapshot, roots: tuple[str, ...]) -> dict[str, str]:
    """The git tree id of each root folder in `snapshot` (the empty tree when absent): a
    committed tree's own id for the folder (one folder read per path level), else the id
    its files would have, computed from the files under that folder only."""
    ids = {}
    for root in roots:
        folder = root.strip("/")
        found = snapshot.folder(folder) if snapshot.lazy else None
        if found is not None and found.tree_id is not None:
            ids[root] = found.tree_id
            continue
        prefix = folder + "/"
        entries = [(p[len(prefix):].encode(), entry.sha.encode(), entry.mode)
                   for p, entry in snapshot.walk(folder)]
        ids[root] = commit_tree(MemoryObjectStore(), entries).decode() if entries else EMPTY_TREE
    return ids


def expected_trees(views: Views, surface: SurfaceMap) -> dict[str, dict[str, str]]:
    """The tree ids an emit file for `views` must record (what `report --emit` checks)."""
    roots = roots_of(surface)
    return {ViewName.BASE: tree_ids(views.base, roots),
            ViewName.HEAD: tree_ids(views.head, roots)}


def materialise(snapshot: Snapshot, roots: tuple[str, ...], into: Path) -> None:
    """Write every file under `roots` from git objects into `into` (symlinks as files)."""
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    for path in snapshot:
        if not path.startswith(prefixes) or snapshot[path].is_submodule:
            continue
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(snapshot.read(path))

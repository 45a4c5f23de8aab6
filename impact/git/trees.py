"""Tree objects read one folder at a time, cached by tree id for the whole process.

Maintainers: reads tree objects only, through the read function it is given (the
repository's, which names a missing object); it never walks a whole tree by itself.
A tree id names its content, so the cache is shared by every repository and view of
the process: base, head and merged trees share most of their folders, and each folder
is parsed once. The cache is bounded by the number of entries it holds.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from dulwich.lru_cache import LRUCache, LRUSizeCache
from dulwich.object_store import ObjectContainer
from dulwich.objects import Tree, parse_tree

from impact.git.snapshot import Entry

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The id of the tree with no entries; it need not be stored in a repository."""

NODE_CACHE_ENTRIES = 250_000
"""How many folder entries (files and subfolders) the node cache holds, in all: a tree
of 100,000 paths, and the folders other trees do not share with it, twice over (an
entry costs about 460 bytes: 115 MB at most)."""

TREE_CACHE_OBJECTS = 2_048
"""How many raw tree objects a tree diff keeps (it reads only the folders that differ)."""


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One folder: its files' (blob id, mode) by name, its subfolders' tree ids by name,
    and every name in git's order (a folder sorts as 'name/'), the order of full paths.
    An Entry is made only when a file is asked for: a walk that classifies paths by
    name needs none."""

    files: dict[str, tuple[bytes, int]]
    folders: dict[str, str]
    order: tuple[tuple[str, bool], ...]

    def entry(self, name: str) -> Entry | None:
        found = self.files.get(name)
        return None if found is None else Entry(found[0].decode(), found[1])


_FORMAT = stat.S_IFMT(0o170000)
_FOLDER = stat.S_IFDIR


def _git_key(item: tuple[bytes, int, bytes]) -> bytes:
    return item[0] + b"/" if item[1] & _FORMAT == _FOLDER else item[0]


_EMPTY_NODE = TreeNode({}, {}, ())
_NODES: LRUSizeCache[str, TreeNode] = LRUSizeCache(
    max_size=NODE_CACHE_ENTRIES, compute_size=lambda node: len(node.order) + 1)


class Trees:
    """The folders of one object store, read on demand.

    It also serves as the object store `dulwich.diff_tree.tree_changes` reads trees
    from (`trees[sha]`), so a diff reads only the folders whose ids differ.
    """

    def __init__(self, objects: ObjectContainer, missing: Callable[[str], Exception]) -> None:
        self._objects = objects
        self._missing = missing
        self._raw: LRUCache[bytes, Tree] = LRUCache(TREE_CACHE_OBJECTS)

    def _read(self, sha: bytes) -> tuple[int, bytes]:
        try:
            return self._objects.get_raw(sha)
        except KeyError:
            raise self._missing(sha.decode()) from None

    def __getitem__(self, sha: bytes) -> Tree:
        cached = self._raw.get(sha)
        if cached is not None:
            return cached
        if sha.decode() == EMPTY_TREE:
            return Tree()
        type_num, raw = self._read(sha)
        if type_num != Tree.type_num:
            raise TypeError(f"{sha.decode()} is not a tree")
        tree = Tree.from_raw_string(type_num, raw, sha)
        self._raw[sha] = tree
        return tree

    def node(self, tree_id: str) -> TreeNode:
        """The folder `tree_id`, parsed once per process."""
        node = _NODES.get(tree_id)
        if node is not None:
            return node
        if tree_id == EMPTY_TREE:
            return _EMPTY_NODE
        type_num, raw = self._read(tree_id.encode())
        if type_num != Tree.type_num:
            raise TypeError(f"{tree_id} is not a tree")
        files: dict[str, tuple[bytes, int]] = {}
        folders: dict[str, str] = {}
        order: list[tuple[str, bool]] = []
        # Parsed without building a dulwich Tree; sorted as git sorts (a folder as 'name/').
        for name_bytes, mode, sha in sorted(parse_tree(raw, len(tree_id) // 2), key=_git_key):
            name = name_bytes.decode()
            if mode & _FORMAT == _FOLDER:
                folders[name] = sha.decode()
                order.append((name, True))
            else:
                files[name] = (sha, mode)
                order.append((name, False))
        node = TreeNode(files, folders, tuple(order))
        _NODES[tree_id] = node
        return node
    def folder(self, root: str, folder: str) -> str | None:
        """The tree id of `folder` ('a/b', '' for the root) inside tree `root`; None when
        the tree has no such folder."""
        tree_id = root
        for name in folder.split("/") if folder else ():
            found = self.node(tree_id).folders.get(name)
            if found is None:
                return None
            tree_id = found
        return tree_id

    def lookup(self, root: str, path: str) -> Entry | None:
        """The entry of file `path` inside tree `root`; None when there is none."""
        folder, _, name = path.rpartition("/")
        tree_id = self.folder(root, folder)
        return None if tree_id is None else self.node(tree_id).entry(name)

    def walk(self, tree_id: str, prefix: str = "") -> Iterator[tuple[str, Entry]]:
        """Every file under tree `tree_id` as (path, entry), path sorted, each path
        starting with `prefix` (the folder's own path and '/', or '')."""
        stack: list[tuple[str, TreeNode, int]] = [(prefix, self.node(tree_id), 0)]
        while stack:
            base, node, start = stack.pop()
            order = node.order
            for i in range(start, len(order)):
                name, is_folder = order[i]
                if is_folder:
                    stack.append((base, node, i + 1))
                    stack.append((f"{base}{name}/", self.node(node.folders[name]), 0))
                    break
                sha, mode = node.files[name]
                yield base + name, Entry(sha.decode(), mode)

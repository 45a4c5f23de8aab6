"""A module that reads its docstrings or its source keeps them in its digests (issue 25).

Docstrings and comments are left out of the layout-blind digests, so editing one reads
`inert`. Code that reads `f.__doc__`, `inspect.getdoc(f)` or `inspect.getsource(f)` makes
such an edit matter at run time: there the docstring-only (or comment-only) edit reads
`changed`, while in a module that reads neither it stays `NONE`.
"""

from __future__ import annotations

import ast

import pytest
from harness import report, scenario
from memory import tree_with

from impact.bindings.python_facts import extract_binding_python_facts
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.python import extract_python_facts
from impact.python.digest import module_digests, tree_digest

TREE = rocke_tree_files()
DOC = '"""The ABI, restated by hand from build_attention_dense."""'
EDIT_DOC = e.replace(e.GFX950_DENSE, DOC, '"""The kernel ABI, restated by hand."""')
READERS = {
    "attribute": "\n\nABI_DOC = attention_dense_signature.__doc__\n",
    "getattr string": '\n\nABI_DOC = getattr(attention_dense_signature, "__doc__")\n',
    "inspect.getdoc": "\n\nimport inspect\nABI_DOC = inspect.getdoc(attention_dense_signature)\n",
    "from inspect import getdoc": "\n\nfrom inspect import getdoc\n"
                                  "ABI_DOC = getdoc(attention_dense_signature)\n",
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_docstring_edit_in_a_module_that_reads_docstrings_is_never_none(reader) -> None:
    doc = report(scenario(tree_with(TREE, e.append(e.GFX950_DENSE, reader)), EDIT_DOC))
    assert doc["verdict"]["kind"] not in ("NONE", "N/A"), doc["rows"]
    rows = [r for r in doc["rows"] if r["subject"] == e.GFX950_DENSE
            or e.GFX950_DENSE in {s["file"] for s in r["sides"]}]
    assert rows and not any(r["status"] == "inert" for r in rows), rows


def test_the_same_docstring_edit_elsewhere_still_reads_none() -> None:
    assert report(scenario(TREE, EDIT_DOC))["verdict"]["kind"] == "NONE"


def test_a_comment_edit_in_a_module_that_reads_its_source_is_never_none() -> None:
    reader = "\n\nimport inspect\nABI_SRC = inspect.getsource(attention_dense_signature)\n"
    doc = report(scenario(tree_with(TREE, e.append(e.GFX950_DENSE, reader)),
                          e.edit_comment(e.GFX950_DENSE)))
    assert doc["verdict"]["kind"] not in ("NONE", "N/A"), doc["rows"]


def _content(facts) -> list:
    return [(f.data["digest"], f.data.get("beyond_bindings")) for f in facts
            if f.kind == "content"]


@pytest.mark.parametrize("extract", [extract_python_facts, extract_binding_python_facts])
def test_every_python_digest_keeps_docstrings_a_module_reads(extract) -> None:
    base = b'def f():\n    """one"""\n    return f.__doc__\n'
    head = base.replace(b"one", b"two")
    assert _content(extract("pkg/m.py", base)) != _content(extract("pkg/m.py", head))
    plain = b'def f():\n    """one"""\n    return 1\n'
    assert _content(extract("pkg/m.py", plain)) == \
        _content(extract("pkg/m.py", plain.replace(b"one", b"two")))


def test_tree_and_module_digests_keep_docstrings_a_module_reads() -> None:
    base = ast.parse('"""one"""\nimport pydoc\n')
    head = ast.parse('"""two"""\nimport pydoc\n')
    assert tree_digest(base) != tree_digest(head)
    assert module_digests(base, {}) != module_digests(head, {})


def test_a_reader_spelled_outside_ascii_is_still_seen() -> None:
    """Python reads identifiers as NFKC: fullwidth `getsource` is `getsource`, so the text
    search that spares most modules a walk must not miss it."""
    plain = 'def f():\n    """Doc."""\n    return 1\n'
    spelled = "import inspect\nx = inspect.\uff47\uff45\uff54source(print)\n"
    for reader in (spelled, spelled.replace("\uff47\uff45\uff54source", "getsource")):
        edited = reader + plain.replace("return 1", "return 1  # note")
        base = module_digests(ast.parse(reader + plain), {}, reader + plain)
        head = module_digests(ast.parse(edited), {}, edited)
        assert base != head  # the comment counts: the module reads its own source
    assert module_digests(ast.parse(plain), {}, plain) == module_digests(
        ast.parse(plain), {}, plain.replace("return 1", "return 1  # note"))

"""A Python parameter renamed at its definition and at every call that passes it by
keyword (aiter 7440006e57: `rename_cpp_to_cu`'s `recurisve` spelled `recursive`) runs the
same program: `inert`, `parameters-renamed-alike`. A caller left with the old keyword, a
caller through `**kwargs`, a function used other than by a call, or an op stub (whose
names are compared against its `py::arg` list) stays as the other checks say."""

from __future__ import annotations

import ast
import textwrap

from harness import charged_rows, report, scenario

from impact.bindings.python_renames import rename_facts, renamed_digest
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.python.scaffold import all_nodes
from impact.render.words.rows import reason_text

AITER = tree_files("aiter_tree")
CORE = "aiter/jit/core.py"
USER = "aiter/ops/user.py"
ACT = "aiter/ops/activation.py"

HELPER = '''

def rename_cpp_to_cu(els, dst, recurisve=False):
    out = []
    for el in els:
        if recurisve:
            out += rename_cpp_to_cu([el + "/x"], dst, recurisve)
        out.append(dst)
    return out


def build(blob_dir, src_dir):
    return rename_cpp_to_cu([blob_dir], src_dir, recurisve=True)
'''


def _base(user: str | None = None) -> dict:
    tree = {**AITER, CORE: AITER[CORE] + HELPER.encode()}
    if user is not None:
        tree[USER] = user.encode()
    return tree


def _rename(*extra: e.Edit) -> tuple[e.Edit, ...]:
    return (e.replace(CORE, "recurisve=False", "recursive=False"),
            e.replace(CORE, "        if recurisve:", "        if recursive:"),
            e.replace(CORE, "dst, recurisve)", "dst, recursive)"),
            e.replace(CORE, "recurisve=True", "recursive=True"), *extra)


def _row(doc: dict, path: str = CORE) -> dict:
    [row] = [r for r in doc["rows"] if r["subject"] == path and r["contract"] == "surface"]
    return row


def test_a_parameter_renamed_alike_everywhere_is_inert() -> None:
    doc = report(scenario(_base(), *_rename()))
    assert doc["verdict"]["kind"] == "NONE", doc["rows"]
    row = _row(doc)
    assert (row["status"], row["reason"]) == ("inert", "parameters-renamed-alike")
    assert row["details"]["renames"] == "rename_cpp_to_cu: recurisve -> recursive"
    assert "recurisve -> recursive" in reason_text(row["reason"], row["details"])


def test_one_call_left_with_the_old_keyword_is_not_inert() -> None:
    edits = _rename()[:-1]  # the call in build() keeps `recurisve=True`
    doc = report(scenario(_base(), *edits))
    assert doc["verdict"]["kind"] in ("BREAKS", "NEEDS-DEVICE"), doc["rows"]
    assert _row(doc)["status"] == "changed"


def test_a_caller_in_another_file_with_the_old_keyword_is_not_inert() -> None:
    user = ("from aiter.jit.core import rename_cpp_to_cu\n\n\n"
            "def go(d):\n    return rename_cpp_to_cu([d], d, recurisve=True)\n")
    doc = report(scenario(_base(user), *_rename()))
    assert doc["verdict"]["kind"] != "NONE", doc["rows"]
    assert _row(doc)["status"] == "changed"
    # The same caller passing it by position leaves the rename inert.
    positional = user.replace("recurisve=True", "True")
    doc = report(scenario(_base(positional), *_rename()))
    assert _row(doc)["reason"] == "parameters-renamed-alike", doc["rows"]


def test_a_caller_through_kwargs_is_changed() -> None:
    user = ("from aiter.jit.core import rename_cpp_to_cu\n\n\n"
            "def go(d, **kw):\n    return rename_cpp_to_cu([d], d, **kw)\n")
    doc = report(scenario(_base(user), *_rename()))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert _row(doc)["status"] == "changed"


def test_a_function_passed_on_as_a_value_is_changed() -> None:
    user = ("from aiter.jit.core import rename_cpp_to_cu\n\nHOOK = rename_cpp_to_cu\n")
    doc = report(scenario(_base(user), *_rename()))
    assert _row(doc)["status"] == "changed", doc["rows"]


def test_a_body_that_changes_beside_the_rename_is_changed() -> None:
    doc = report(scenario(_base(), *_rename(e.replace(CORE, "out.append(dst)",
                                                       "out.append(el)"))))
    assert _row(doc)["status"] == "changed", doc["rows"]


def test_a_bound_op_stub_renamed_is_still_compared_against_py_arg() -> None:
    """A stub's names are the binding's: its rename is judged by the bindings check
    (against `py::arg`), never as a rename alike."""
    doc = report(scenario(AITER, e.replace(ACT, "def gelu_and_mul(out: Tensor, input: Tensor)",
                                           "def gelu_and_mul(out: Tensor, inp: Tensor)")))
    assert doc["verdict"]["kind"] != "NONE", doc["rows"]
    assert not [r for r in doc["rows"] if r["reason"] == "parameters-renamed-alike"]
    assert any(r["contract"] == "bindings" for r in charged_rows(doc, "changed")
               + charged_rows(doc, "mismatch")), doc["rows"]


def test_a_caller_elsewhere_that_already_passed_the_new_name_is_not_inert() -> None:
    """It raised TypeError at the base and binds at the head: what runs changed."""
    user = ("from aiter.jit.core import rename_cpp_to_cu\n\n\n"
            "def go(d):\n    return rename_cpp_to_cu([d], d, recursive=True)\n")
    doc = report(scenario(_base(user), *_rename()))
    assert _row(doc)["status"] == "changed", doc["rows"]


def test_a_launcher_call_in_another_file_is_a_caller_too() -> None:
    user = ("from aiter.jit.core import rename_cpp_to_cu\n\n\n"
            "def go(d):\n    return rename_cpp_to_cu[d](d, recurisve=True)\n")
    doc = report(scenario(_base(user), *_rename()))
    assert _row(doc)["status"] == "changed", doc["rows"]


def test_a_decorated_function_or_a_name_looked_up_by_string_is_changed() -> None:
    decorated = {**_base(), CORE: _base()[CORE].replace(
        b"\ndef rename_cpp_to_cu(", b"\n@functools.lru_cache\ndef rename_cpp_to_cu(")}
    doc = report(scenario(decorated, *_rename()))
    assert _row(doc)["status"] == "changed", doc["rows"]
    user = ("import aiter.jit.core as core\n\n\n"
            "def go(d):\n    return getattr(core, 'rename_cpp_to_cu')\n")
    doc = report(scenario(_base(user), *_rename()))
    assert _row(doc)["status"] == "changed", doc["rows"]


def _digest(code: str) -> str | None:
    return renamed_digest("m.py", textwrap.dedent(code).encode())


def test_the_renamed_digest_follows_the_innermost_def_that_takes_a_name() -> None:
    """A nested def's own parameter shadows the outer one's in its body; elsewhere the
    outer def's place is written. Renaming alike keeps the digest, a capture does not."""
    base = """
        def outer(x, y):
            def inner(x):
                return x + y
            return inner(x=y) + x
    """
    renamed = base.replace("(x, y)", "(a, b)").replace("+ y", "+ b").replace(
        "inner(x=y) + x", "inner(x=b) + a")
    assert _digest(base) == _digest(renamed)
    inner_renamed = base.replace("inner(x)", "inner(z)").replace("return x + y",
                                                                    "return z + y")
    assert _digest(base) != _digest(inner_renamed)  # the call still passes x=
    captured = base.replace("return x + y", "return x + x")
    assert _digest(base) != _digest(captured)
    # The rename facts leave the shared tree as parsed; a file that does not parse has
    # no renamed digest (so no rename is shown inert).
    tree = ast.parse(textwrap.dedent(base))
    before = ast.dump(tree)
    rename_facts(tree, all_nodes(tree))
    assert ast.dump(tree) == before
    assert _digest("def f(x:\n    return x\n") is None


def test_a_rename_in_a_module_that_reads_its_own_source_is_changed() -> None:
    """`inspect.getsource` sees the parameter's name: the same rename is no longer inert."""
    reader = "\n\ndef source_of(f):\n    import inspect\n    return inspect.getsource(f)\n"
    base = _base()
    base[CORE] = base[CORE] + reader.encode()
    doc = report(scenario(base, *_rename()))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert _row(doc)["status"] == "changed"

"""Forwarded calls: `cute.compile(obj, *args, **kw)` runs `obj.__call__(*args, **kw)` (the
map's `call_forwarders`), so what it passes on binds to the `__call__` of `obj`'s class,
kept by the map's `signature_decorators` (`cute.jit`). A bind that holds at the base and
fails at the head is BREAKS; a callee the tool cannot resolve or read is `changed`."""

from __future__ import annotations

from harness import charged_rows, report, scenario

from impact.bindings import extract_binding_python_facts
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.kinds import FactKind
from impact.surface import builtin_map

FA = tree_files("flash_attention_tree")
KERN = "flash_attn/cute/kern_sm90.py"
IFACE = "flash_attn/cute/iface.py"

KERNEL = '''import cutlass.cute as cute


class KernSm90:
    def __init__(self, dtype):
        self.dtype = dtype

    @cute.jit
    def __call__(self, mQ, mK, stream, mSeq=None):
        return mQ
'''

CALLER = '''import cutlass.cute as cute

from flash_attn.cute.kern_sm90 import KernSm90


def run(q, k, stream, flag):
    obj = KernSm90(q.dtype)
    return cute.compile(obj, q, k, stream)
'''


def _tree(kernel: str = KERNEL, caller: str = CALLER) -> dict:
    return {**FA, KERN: kernel, IFACE: caller}


def _forwarded(doc: dict, status: str) -> list[dict]:
    return [r for r in charged_rows(doc, status) if r["contract"] == "bindings"
            and r["reason"] in ("call-does-not-bind", "call-now-binds",
                                "forwarded-callee-unresolved", "forwarded-callee-not-read",
                                "forwarded-callee-signature-unknown")]


def test_the_maps_name_the_forwarder_and_the_decorator() -> None:
    for name in ("flash-attention", "aiter"):
        rules = builtin_map(name).conventions
        assert "cute.compile" in rules.call_forwarders
        assert "cute.jit" in rules.signature_decorators


def test_the_reader_resolves_the_name_to_every_class_assigned_to_it() -> None:
    source = CALLER.replace("    obj = KernSm90(q.dtype)\n",
                            "    if flag:\n        obj = KernSm90(q.dtype)\n"
                            "    else:\n        obj = Other(1)\n").replace(
        "from flash_attn.cute.kern_sm90 import KernSm90",
        "from flash_attn.cute.kern_sm90 import KernSm90\nfrom flash_attn.cute.other import Other")
    facts = extract_binding_python_facts(IFACE, source.encode(), forwarders=("cute.compile",),
                                         keeps_signature=("cute.jit",))
    [call] = [f for f in facts if f.kind == FactKind.OP_FORWARDED_CALL]
    assert call.data["targets"] == [
        {"class": "KernSm90", "module": "flash_attn.cute.kern_sm90"},
        {"class": "Other", "module": "flash_attn.cute.other"}]
    assert call.data["positional"] == 3 and call.data["unresolved"] is None
    # Without the forwarder named, no such fact is read.
    plain = extract_binding_python_facts(IFACE, source.encode())
    assert not [f for f in plain if f.kind == FactKind.OP_FORWARDED_CALL]


def test_a_keyword_the_callee_lacks_breaks_and_names_both_sites() -> None:
    doc = report(scenario(_tree(), e.replace(IFACE, "cute.compile(obj, q, k, stream)",
                                             "cute.compile(obj, q, k, stream, mSem=None)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    [row] = [r for r in _forwarded(doc, "mismatch") if r["reason"] == "call-does-not-bind"]
    assert row["details"]["name"] == "mSem" and row["details"]["refusal"] == "unknown-keyword"
    assert row["details"]["layer"] == "KernSm90.__call__"
    assert row["details"]["head_form"] == "(mQ, mK, stream, mSeq=None)"
    assert row["details"]["base_form"] == "(mQ, mK, stream, mSeq=None)"
    files = {(s["file"], s["line"]) for s in row["sides"]}
    assert (KERN, 9) in files and any(f == IFACE for f, _ in files), row["sides"]
    # The call bound at the base: what it passed then and passes now, side by side; the
    # layer did not change, so its base form is not said again.
    assert row["details"]["base_call"] == "(q, k, stream)"
    assert row["details"]["head_call"] == "(q, k, stream, mSem=None)"
    assert "base_layer" not in row["details"]
    assert row["says"].endswith("; at the base it bound, and what it passes changed: "
                                "(q, k, stream) → (q, k, stream, mSem=None)")


def test_the_callee_losing_a_parameter_a_call_passes_breaks() -> None:
    """The other direction: the caller is untouched, the `__call__` drops `stream` (and
    `mSeq`): the three values passed no longer fit."""
    doc = report(scenario(_tree(), e.replace(KERN, "def __call__(self, mQ, mK, stream, mSeq=None)",
                                             "def __call__(self, mQ, mK)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    [row] = [r for r in _forwarded(doc, "mismatch") if r["reason"] == "call-does-not-bind"]
    assert row["details"]["base_layer"] == "(mQ, mK, stream, mSeq=None)"
    assert row["details"]["head_form"] == "(mQ, mK)"
    assert "the KernSm90.__call__ changed: (mQ, mK, stream, mSeq=None) → (mQ, mK)" \
        in row["says"]


def test_a_call_that_binds_again_is_changed_not_breaks() -> None:
    base = _tree(caller=CALLER.replace("cute.compile(obj, q, k, stream)",
                                       "cute.compile(obj, q, k, stream, mSem=None)"))
    doc = report(scenario(base, e.replace(KERN, "mSeq=None)", "mSeq=None, mSem=None)")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["reason"] == "call-now-binds" for r in _forwarded(doc, "changed"))


def test_a_keyword_taken_by_the_callees_kwargs_binds() -> None:
    base = _tree(kernel=KERNEL.replace("mSeq=None)", "mSeq=None, **kw)"))
    doc = report(scenario(base, e.replace(IFACE, "cute.compile(obj, q, k, stream)",
                                          "cute.compile(obj, q, k, stream, mSem=None)")))
    assert doc["verdict"]["kind"] != "BREAKS", doc["rows"]
    assert not _forwarded(doc, "mismatch")


def test_a_call_spreading_kwargs_still_breaks_on_a_keyword_it_names() -> None:
    """`**kw` hides what more it passes (no missing parameter is concluded), but a keyword
    the call names and the callee lacks fails all the same."""
    spread = CALLER.replace("def run(q, k, stream, flag):", "def run(q, k, stream, flag, **kw):")
    base = _tree(caller=spread.replace("cute.compile(obj, q, k, stream)",
                                       "cute.compile(obj, q, **kw)"))
    ok = report(scenario(base, e.replace(IFACE, "cute.compile(obj, q, **kw)",
                                         "cute.compile(obj, q, k, **kw)")))
    assert not _forwarded(ok, "mismatch"), ok["rows"]
    bad = report(scenario(base, e.replace(IFACE, "cute.compile(obj, q, **kw)",
                                          "cute.compile(obj, q, mSem=k, **kw)")))
    assert bad["verdict"]["kind"] == "BREAKS", bad["rows"]


def test_an_unresolved_callee_fails_closed() -> None:
    """`obj` is a parameter: its class is unknown, so the call reads changed, never NONE."""
    caller = CALLER.replace("def run(q, k, stream, flag):", "def run(q, k, stream, flag, obj):"
                            ).replace("    obj = KernSm90(q.dtype)\n", "")
    doc = report(scenario(_tree(caller=caller), e.replace(
        IFACE, "cute.compile(obj, q, k, stream)", "cute.compile(obj, q, k, stream, mSem=1)")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["reason"] == "forwarded-callee-unresolved" for r in _forwarded(doc, "changed"))


def test_a_decorator_that_may_change_the_signature_fails_closed() -> None:
    other = KERNEL.replace("@cute.jit", "@functools.wraps(len)").replace(
        "import cutlass.cute as cute", "import functools\nimport cutlass.cute as cute")
    doc = report(scenario(_tree(kernel=other), e.replace(
        IFACE, "cute.compile(obj, q, k, stream)", "cute.compile(obj, q, k, stream, mSem=1)")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["reason"] == "forwarded-callee-signature-unknown"
               for r in _forwarded(doc, "changed"))
    # The same edit under the kept decorator is a break: the decorator is what decided.
    kept = report(scenario(_tree(), e.replace(
        IFACE, "cute.compile(obj, q, k, stream)", "cute.compile(obj, q, k, stream, mSem=1)")))
    assert kept["verdict"]["kind"] == "BREAKS"


def test_a_callee_whose_call_is_inherited_fails_closed() -> None:
    own = "    @cute.jit\n    def __call__(self, mQ, mK, stream, mSeq=None):\n        return mQ\n"
    inherited = KERNEL.replace("class KernSm90:", "class KernSm90(Base):").replace(own, "")
    doc = report(scenario(_tree(kernel=inherited), e.replace(
        IFACE, "cute.compile(obj, q, k, stream)", "cute.compile(obj, q, k, stream, mSem=1)")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["reason"] == "forwarded-callee-not-read" for r in _forwarded(doc, "changed"))


def test_the_forwarders_own_keyword_is_not_passed_on() -> None:
    """`cute.compile(obj, ..., options="--enable-tvm-ffi")`: `options` is cute.compile's
    (the map's `forwarder_keywords`), never the `__call__`'s."""
    assert "options" in builtin_map("flash-attention").conventions.forwarder_keywords
    doc = report(scenario(_tree(), e.replace(
        IFACE, "cute.compile(obj, q, k, stream)",
        'cute.compile(obj, q, k, stream, options="--enable-tvm-ffi")')))
    assert doc["verdict"]["kind"] != "BREAKS", doc["rows"]
    assert not _forwarded(doc, "mismatch")

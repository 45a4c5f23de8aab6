"""Python is read as `compile()` reads it (PEP 263), or not at all (issue 25, class A).

A coding declaration decides the text CPython builds from a file's bytes. Read as UTF-8
whatever it declares, a `raw_unicode_escape` file's comment `# \\u000a x = 1` is a comment
to the reader and a statement to CPython. The reader decodes by the declaration, and
refuses (a parse failure, so `changed`) every codec that can move a line break, a
comment or a string: only the ASCII-transparent ones of `READABLE_CODECS` are read.
"""

from __future__ import annotations

import pytest
from harness import report, scenario

from impact.bindings.python_facts import extract_binding_python_facts
from impact.facts import PARSE_FAILURE, Fact
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files, tree_files
from impact.python import extract_python_facts

SAFE = ("NONE", "N/A")
HIDDEN = {
    # each declares a codec whose decoding turns the "comment" into `x = 2`
    "raw_unicode_escape": b"# -*- coding: raw_unicode_escape -*-\nx = 1\n# \\u000ax = 2\n",
    "unicode_escape": b"# -*- coding: unicode_escape -*-\nx = 1\n# \\nx = 2\n",
    "utf-7": b"# -*- coding: utf-7 -*-\nx = 1\n# +AAo-x = 2\n",
    "utf-16 by its BOM-less name": b"# coding: utf_16\n",
    "shift_jis": b"# -*- coding: shift_jis -*-\nx = 1\n",
}


def failures(facts: list[Fact]) -> list[str]:
    return [str(f.data["reason"]) for f in facts if f.kind == PARSE_FAILURE]


def test_the_readable_codecs_are_ascii_transparent() -> None:
    """Each codec read maps ASCII bytes to themselves and no other byte to ASCII, so a
    comment, a string or a line break sits where a UTF-8 reader of the bytes sees it."""
    from impact.sourcetext import READABLE_CODECS

    for codec in READABLE_CODECS:
        assert bytes(range(128)).decode(codec) == "".join(map(chr, range(128))), codec
        for byte in range(128, 256):
            try:
                char = bytes([byte]).decode(codec)
            except UnicodeDecodeError:
                continue
            assert not char.isascii(), (codec, byte)


@pytest.mark.parametrize("source", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_codec_that_can_make_a_comment_code_is_refused(source: bytes) -> None:
    assert failures(extract_python_facts("pkg/mod.py", source))
    assert failures(extract_binding_python_facts("pkg/mod.py", source))


def test_a_latin_1_file_is_read_by_its_declaration() -> None:
    """`é` is byte 0xe9 in a latin-1 file: not UTF-8, yet Python builds it; read, not
    refused, and its string is the one CPython builds."""
    source = '# -*- coding: latin-1 -*-\ndef f():\n    return "é"\n'.encode("latin-1")
    facts = extract_python_facts("pkg/mod.py", source)
    assert not failures(facts), facts
    other = '# -*- coding: latin-1 -*-\ndef f():\n    return "è"\n'.encode("latin-1")
    digest = [f.data for f in facts if f.kind == "content"]
    assert digest and digest != [f.data for f in extract_python_facts("pkg/mod.py", other)
                                 if f.kind == "content"]


def test_a_byte_search_does_not_pass_over_a_file_it_cannot_search() -> None:
    """`+AG0-ha_fwd` is `mha_fwd` in UTF-7: a file of such a codec is kept for parsing."""
    from impact.sourcetext import searchable_as_bytes

    assert not searchable_as_bytes("pkg/mod.py", HIDDEN["utf-7"])
    assert searchable_as_bytes("pkg/mod.py", b"# coding: latin-1\nx = 1\n")
    assert searchable_as_bytes("csrc/a.cpp", HIDDEN["utf-7"])


def _hidden_statement(path: str, anchor: str, statement: str) -> tuple[e.Edit, e.Edit]:
    """Declare `raw_unicode_escape` on line 1 and hide `statement` in a comment on the
    line before `anchor`: two comment-only edits to a UTF-8 reader, a new statement to
    CPython."""

    def declare(files: dict[str, bytes]) -> None:
        files[path] = b"# -*- coding: raw_unicode_escape -*-\n" + files[path]

    indent = anchor[:len(anchor) - len(anchor.lstrip())]
    return declare, e.replace(path, anchor,
                              f"{indent}# note\\u000a{indent}{statement}\n{anchor}")


def test_a_builder_param_hidden_by_a_coding_declaration_is_never_none() -> None:
    edits = _hidden_statement(e.GFX950_DENSE, f"    {e.DENSE_COMMENT}",
                              'hidden = b.param("hidden", I32)')
    doc = report(scenario(rocke_tree_files(), *edits))
    assert doc["verdict"]["kind"] not in SAFE, doc["rows"]
    rows = [r for r in doc["rows"] if r["subject"] == e.GFX950_DENSE
            or e.GFX950_DENSE in {s["file"] for s in r["sides"]}]
    assert any(r["status"] == "changed" for r in rows), rows
    assert not any(r["status"] == "inert" for r in rows), rows


def test_a_caller_swap_hidden_by_a_coding_declaration_is_never_none() -> None:
    fa_py = "flash_attn/flash_attn_interface.py"
    edits = _hidden_statement(fa_py, "    out, softmax_lse, S_dmask, rng_state = "
                              "flash_attn_gpu.fwd(", "q, k = k, q")
    doc = report(scenario(tree_files("flash_attention_tree"), *edits))
    assert doc["verdict"]["kind"] not in SAFE, doc["rows"]

"""C++ is split into lines as the compiler splits it (issue 25, class A).

g++ and clang end a line at LF, CR LF or a lone CR, and splice a line ending in a
backslash to the next even with blanks between the backslash and the line's end.
tree-sitter ends a `//` comment at LF only and splices a bare backslash only, so before
the fix a lone CR hid from the reader a `KernelArgument` or a `return` the compiler
reads, and `\\ ` before a line end showed it an entry the compiler does not. And the
comment-blind digest of a file that does not parse now reads after line splicing.
"""

from __future__ import annotations

from harness import report, scenario

from impact.bindings.cpp_facts import extract_binding_cpp_facts, lexical_digest
from impact.cpp import extract_cpp_facts
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

SAFE = ("NONE", "N/A")
TREE = rocke_tree_files()
LAST = '        {"by_value", 4, 44, "seqlen_kv"},\n'
BEFORE_LAST = '        {"by_value", 4, 40, "seqlen_q"},\n'
SCALE = "        const float scale = m_scale; // raw scale; the kernel folds in log2(e)\n"


def _pack_rows(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["subject"] == e.GFX950_DENSE_PACK
            or e.GFX950_DENSE_PACK in {s["file"] for s in r["sides"]}]


def test_a_kernel_argument_after_a_lone_cr_is_read() -> None:
    """`// tail\\r{...}`: the entry after the CR is code to the compiler, a ninth argument
    the builder does not declare."""
    doc = report(scenario(TREE, e.replace(e.GFX950_DENSE_PACK, LAST, LAST.replace(
        "},\n", '}, // tail\r        {"by_value", 4, 48, "extra"},\n'))))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]


def test_an_early_return_after_a_lone_cr_is_never_inert() -> None:
    doc = report(scenario(TREE, e.replace(e.GFX950_DENSE_PACK, SCALE,
                                          SCALE.replace("\n", "\r        return;\n"))))
    assert doc["verdict"]["kind"] not in SAFE, doc["rows"]
    assert not any(r["status"] == "inert" for r in _pack_rows(doc)), _pack_rows(doc)


def test_a_backslash_then_blanks_splices_the_next_entry_into_the_comment() -> None:
    """`// next \\  ` splices the line after it into the comment for g++ and clang: the
    pack loses `seqlen_kv`, which the builder still declares."""
    doc = report(scenario(TREE, e.replace(e.GFX950_DENSE_PACK, BEFORE_LAST,
                                          BEFORE_LAST.replace("},\n", "}, // next \\  \n"))))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]


def test_line_numbers_stay_the_compiler_s() -> None:
    """CR LF and lone CR each end one line, so a fact keeps the line the compiler gives it."""
    lf = b"constexpr const char* A = \"a\";\n// x\nconstexpr const char* B = \"b\";\n"
    for ending in (b"\r\n", b"\r"):
        other = lf.replace(b"\n", ending)
        assert [(f.kind, f.name, f.line) for f in extract_cpp_facts("a.cpp", other)] == \
            [(f.kind, f.name, f.line) for f in extract_cpp_facts("a.cpp", lf)]


def test_a_lone_cr_in_a_comment_changes_a_binding_file_s_content() -> None:
    base = b'#include <x.h>\nvoid f(int a) {\n  // note\n  g(a);\n}\n'
    head = base.replace(b"// note\n", b"// note\r  return;\n")

    def content(source: bytes) -> object:
        return [f.data for f in extract_binding_cpp_facts("csrc/a.cpp", source)
                if f.kind == "content"]

    assert content(base) != content(head)


def test_the_comment_blind_digest_reads_after_line_splicing() -> None:
    """A `//` comment ending in a backslash swallows the next line; `/\\`+`/` opens one."""
    swallowed = lexical_digest(b"int f( {\n// c \\\ny = 1;\n")
    assert swallowed != lexical_digest(b"int f( {\n// c \ny = 1;\n")
    assert lexical_digest(b"int f( {\nx /\\\n/ y = 1;\n") == lexical_digest(b"int f( {\nx\n")


def test_the_comment_blind_digest_does_not_read_raw_strings() -> None:
    """In `R"x( " // a )x"` the `//` is inside the string: any edit there changes code."""
    assert lexical_digest(b'int f( {\nauto s = R"x( " // a )x";\n') is None


def test_a_splice_that_joins_two_tokens_is_not_read() -> None:
    """`a &\\`+`& b` is `a && b` to the compiler and `a & &b` to tree-sitter; `/\\`+`/`
    opens a comment the parser does not see: such a file is refused (`changed`)."""
    for source in (b"int f(int a, int b) {\n  return a &\\\n& b;\n}\n",
                   b"int f() {\n  g(); /\\\n/ return;\n  h();\n}\n"):
        for extract in (extract_cpp_facts, extract_binding_cpp_facts):
            facts = extract("a.cpp", source)
            assert [f.kind for f in facts] == ["parse-failure"], facts
            assert facts[0].line == 2
    # a macro's splice after a blank, the spelling real code uses, is still read
    macro = b"#define ADD(a, b) a + \\\n    b\nconstexpr const char* A = \"a\";\n"
    assert "constexpr-string" in {f.kind for f in extract_cpp_facts("a.cpp", macro)}


def test_a_joining_splice_edit_is_never_none() -> None:
    doc = report(scenario(TREE, e.replace(e.GFX950_DENSE_PACK, SCALE, SCALE.replace(
        "// raw scale;", "/\\\n/ raw scale;"))))
    assert doc["verdict"]["kind"] not in SAFE, doc["rows"]

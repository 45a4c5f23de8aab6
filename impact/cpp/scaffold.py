"""What every tree-sitter extractor starts from: the parsers, which grammar reads a C++
file, decoding, syntax errors, the layout-blind digest, and small node readers.

Maintainers: shared by the hipDNN C++ extractor (impact/cpp/facts.py), the CMake extractor
(impact/cpp/cmake.py) and the bindings C++ extractor (impact/bindings/cpp_facts.py), so all
of them decode, parse and report a broken file the same way. Pure functions over bytes and
tree-sitter nodes; nothing here touches git or the filesystem. String literal values live
in impact/cpp/literals.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import tree_sitter
import tree_sitter_cmake
import tree_sitter_cpp
import tree_sitter_cuda

from impact.cpp.digest import tree_digest
from impact.facts import Fact, content_fact, never_raises, parse_failure

CPP = tree_sitter.Language(tree_sitter_cpp.language())
CMAKE = tree_sitter.Language(tree_sitter_cmake.language())
# tree-sitter-cpp with CUDA's declaration specifiers (`__global__`, `__device__`, ...) and
# the `<<<grid, block>>>` launch: HIP spells kernels the same way.
CUDA = tree_sitter.Language(tree_sitter_cuda.language())
CUDA_SUFFIXES = (".cu", ".cuh", ".hip")
# What makes a header's text CUDA: a plain C++ grammar rejects any of these.
_CUDA_MARKERS = re.compile(
    rb"\b__(?:global|device|host|shared|launch_bounds)__\b|<<<")
# Node types that open a class body (their members are scoped by the class name).
CLASS_TYPES = ("class_specifier", "struct_specifier")
_PARSERS = {id(language): tree_sitter.Parser(language) for language in (CPP, CUDA, CMAKE)}


def parse(source: bytes, language: tree_sitter.Language = CPP) -> tree_sitter.Tree:
    """The syntax tree of `source` (tree-sitter never fails: broken parts become ERROR)."""
    return _PARSERS[id(language)].parse(source)


def cuda_flavoured(text: bytes) -> bool:
    """Whether a C++ text uses a CUDA/HIP keyword or a `<<<...>>>` launch."""
    return _CUDA_MARKERS.search(text) is not None


def grammar_for(path: str, text: bytes) -> tree_sitter.Language:
    """The grammar a C++ file is parsed with: CUDA's for `.cu`, `.cuh` and `.hip` sources
    and for any file whose text is CUDA-flavoured (a `.h` of device helpers), else
    tree-sitter-cpp's, so plain C++ keeps the facts and digests it always had (the two
    grammars name some nodes differently; benchmarks/cuda_grammar.py measures both)."""
    if path.endswith(CUDA_SUFFIXES) or cuda_flavoured(text):
        return CUDA
    return CPP


def language_label(grammar: tree_sitter.Language) -> str:
    """The language a parse failure names: `CUDA` for the CUDA grammar, else `C++`."""
    return "CUDA" if grammar is CUDA else "C++"


def decoded(path: str, source: bytes, preprocessor_lines: bool = False) -> bytes | Fact:
    """The source, ended by a newline (a last `#include` or `#endif` needs its line ended),
    its lines split as the C preprocessor splits them when `preprocessor_lines` is set
    (`compiler_lines`), or the one parse-failure fact of a file that is not UTF-8."""
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as err:
        return parse_failure(path, f"not UTF-8: {err.reason}")
    if preprocessor_lines:
        source = compiler_lines(source)
        joined = _JOINING_SPLICE.search(source)
        if joined is not None:
            return parse_failure(path, "a backslash at a line's end joins two tokens the "
                                 "compiler reads as one and the parser as two",
                                 source.count(b"\n", 0, joined.start()) + 1)
    return source if source.endswith(b"\n") else source + b"\n"


_LINE_END = re.compile(rb"\r\n?")
_SPACED_SPLICE = re.compile(rb"\\[ \t\f\v]+\n")
# A splice with no blank on either side: the compiler joins what it splits (`a &\`, `& b`
# is `a && b`; `/\`, `/` opens a comment), tree-sitter reads it as a blank between two
# tokens. Real code splices after a blank (a macro's `... \`); none of aiter's,
# flash-attention's or FlashMLA's C++ files has one of these, so such a file is refused.
_JOINING_SPLICE = re.compile(rb"\S\\\n\S")


def compiler_lines(source: bytes) -> bytes:
    """The source with its lines ended as g++ and clang end them (the GCC manual,
    "Initial processing"): CR LF and a lone CR end a line as LF does, and a backslash
    followed by blanks before the line's end splices it to the next as a bare backslash
    does (both compilers warn, and splice). tree-sitter ends a `//` comment at LF only
    and splices only a bare backslash, so without this a comment would hide from it a
    `KernelArgument` or a `return` that the compiler reads, or show it one the compiler
    does not. Each line end stays one, so every line keeps the number the compiler gives it.
    (Blanks after a backslash inside a raw string literal are the compiler's own to keep;
    here they go, so such an edit reads as layout only.)"""
    if b"\r" in source:
        source = _LINE_END.sub(b"\n", source)
    if b"\\" in source:
        source = _SPACED_SPLICE.sub(b"\\\n", source)
    return source


def extract_tree(path: str, source: bytes, language: str,
                 extract: Callable[[bytes], list[Fact]],
                 preprocessor_lines: bool = False) -> list[Fact]:
    """`extract(text)` of the decoded source (see `decoded`); never raises: a file that is
    not UTF-8, or an extractor that raises, yields exactly one parse-failure fact. C and
    C++ extractors set `preprocessor_lines`; CMake ends a comment at LF only, so it does not."""
    text = decoded(path, source, preprocessor_lines)
    if isinstance(text, Fact):
        return [text]
    return never_raises(path, language, lambda: extract(text))


def first_error_line(root: tree_sitter.Node) -> int:
    """1-based line of the first ERROR or missing node under `root`."""
    node = root
    while True:
        if node.type == "ERROR" or node.is_missing:
            return line_of(node)
        bad = [child for child in node.children if child.has_error]
        if not bad:
            return line_of(node)
        node = bad[0]


def syntax_failure(path: str, root: tree_sitter.Node, language: str) -> Fact | None:
    """The parse-failure fact naming the first broken line of a tree with errors, else None."""
    if not root.has_error:
        return None
    return parse_failure(path, f"{language} syntax error", first_error_line(root))


def token_digest(root: tree_sitter.Node, comments: frozenset[str] = frozenset({"comment"})) -> str:
    """The layout-blind digest of the tree under `root` (impact/cpp/digest.py says what it
    is blind to), `comments` node types left out."""
    return tree_digest(root, comments)


def closing_fact(path: str, root: tree_sitter.Node, language: str,
                 digest_root: tree_sitter.Node | None = None) -> Fact:
    """The fact that ends a file's facts: its first syntax error, or its `content` fact
    (the layout-blind digest of `digest_root`, the parsed tree itself by default)."""
    failure = syntax_failure(path, root, language)
    if failure is not None:
        return failure
    return content_fact(path, token_digest(root if digest_root is None else digest_root))


def node_text(node: tree_sitter.Node, source: bytes) -> str:
    """The source text a node spans (undecodable bytes replaced)."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def line_of(node: tree_sitter.Node) -> int:
    """1-based line a node starts on."""
    return node.start_point.row + 1


def function_declarator(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The function_declarator inside a declarator chain (pointers, references), or None."""
    while node is not None and node.type != "function_declarator":
        node = node.child_by_field_name("declarator")
    return node


def declared_identifier(node: tree_sitter.Node | None,
                        unnamed: tuple[str, ...] = ("reference_declarator",),
                        ) -> tree_sitter.Node | None:
    """The identifier a declarator chain declares, or None; `unnamed` are the declarator
    types whose inner declarator is a plain child rather than a `declarator` field."""
    while node is not None:
        if node.type in ("identifier", "field_identifier", "qualified_identifier"):
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None and node.type in unnamed:
            inner = next((c for c in node.named_children if c.type != "comment"), None)
        node = inner
    return None

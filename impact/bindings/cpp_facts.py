"""Binding facts of one C++ source: pybind `m.def`, TORCH_LIBRARY schemas, `m.impl`,
boxed `stack[i]` reads and every function's parameter list, and its two digests.

Maintainers: this module parses the bytes it is handed with tree-sitter-cpp, or with
tree-sitter-cuda for a CUDA/HIP source or a CUDA-flavoured header (`grammar_for` in
impact/cpp/scaffold.py), and must not touch git or the filesystem.
`extract_binding_cpp_facts` never raises. A file with syntax errors keeps the facts of
its clean declarations and names its broken ones in the `content` fact (`unsure`:
`cpp_unsure.py`); one whose broken part holds binding syntax yields one `parse-failure`
fact beside whatever its clean parts showed.
Before tree-sitter sees the file, `#if` blocks inside parentheses are flattened to their
first branch (`cpp_conditionals.py`); the walk that states the facts is `cpp_walk.py`;
what is left here is the entry point and the digests that say whether code beyond the
facts changed (`beyond_digest`) and whether an unparsed file changed beyond comments
and layout (`lexical_digest`).
"""

from __future__ import annotations

import hashlib
import re

import tree_sitter

from impact.bindings.cpp_conditionals import flatten_conditionals
from impact.bindings.cpp_unsure import unsure_regions
from impact.bindings.cpp_walk import DEF_CALL, Scope, Walker
from impact.cpp.scaffold import (
    extract_tree,
    grammar_for,
    language_label,
    parse,
    syntax_failure,
    token_digest,
)
from impact.facts import Fact, sorted_facts
from impact.kinds import FactKind

LANGUAGE = "C++"
# Where a raw string literal opens: `R"`, `u8R"`, `uR"`, `UR"`, `LR"`, not inside a name.
_RAW_STRING = re.compile(rb'(?<![A-Za-z0-9_])(?:u8|u|U|L)?R"')


def extract_binding_cpp_facts(path: str, source: bytes,
                              grammar: tree_sitter.Language | None = None) -> list[Fact]:
    """Every binding fact one C++ source states, sorted; never raises. The grammar is the
    one `grammar_for` picks for the file unless `grammar` names one (a benchmark's)."""

    def extract(text: bytes) -> list[Fact]:
        language = grammar if grammar is not None else grammar_for(path, text)
        flat, regions = flatten_conditionals(text)
        tree = parse(flat, language)
        walker = Walker(flat, regions, grammar=language)
        walker.visit(tree.root_node, Scope())
        facts = walker.finish()
        failure = syntax_failure(path, tree.root_node, language_label(language))
        regions = unsure_regions(tree.root_node, flat) if failure is not None else []
        if regions is None:
            assert failure is not None
            # Unparsed, yet a comment-only edit is still provable: the text without its
            # comments, layout folded, is the same at both revisions.
            lexical = lexical_digest(text)
            facts.append(Fact(failure.kind, failure.name, failure.line,
                              {**failure.data, **({} if lexical is None
                                                  else {"lexical_digest": lexical})}))
            return sorted_facts(facts)
        # Declarations that did not parse state nothing: their facts would be misread
        # ones; the content digests still cover every token they spell.
        facts = [f for f in facts if not any(r.holds(f.line) for r in regions)]
        root = parse(text, language).root_node
        content = {"digest": token_digest(root), "beyond_bindings": beyond_digest(root)}
        if regions:
            content["unsure"] = [r.as_data() for r in regions]
        facts.append(Fact(FactKind.CONTENT, path, 0, content))
        return sorted_facts(facts)

    return extract_tree(path, source, LANGUAGE, extract, preprocessor_lines=True)


def lexical_digest(source: bytes) -> str | None:
    """sha256 of the source with its comments left out and whitespace folded (string and
    character literals kept verbatim): equal for two texts that differ only in comments
    and layout, whether or not they parse. Read after the preprocessor's line splicing
    (a backslash at a line's end joins it to the next, so `/\\`, `/` opens a comment and
    a `//` comment ending in a backslash goes on), on lines `compiler_lines` ended. None
    for a text with a raw string literal, whose quotes and `//` this reading cannot tell
    from code (such a file then reads `changed` on any edit)."""
    if _RAW_STRING.search(source) is not None:
        return None
    source = source.replace(b"\\\n", b"")
    out = bytearray()
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == 47 and source[i + 1 : i + 2] == b"/":
            j = source.find(b"\n", i)
            i = n if j < 0 else j
            out += b" "
        elif c == 47 and source[i + 1 : i + 2] == b"*":
            j = source.find(b"*/", i + 2)
            i = n if j < 0 else j + 2
            out += b" "
        elif c in (34, 39):
            j = i + 1
            while j < n and source[j] != c and source[j] != 10:
                j += 2 if source[j] == 92 else 1
            out += source[i : j + 1]
            i = j + 1
        else:
            out.append(c)
            i += 1
    return hashlib.sha256(b" ".join(bytes(out).split())).hexdigest()


def beyond_digest(root: tree_sitter.Node) -> str:
    """The layout-blind digest of everything a file says beyond its binding facts: every
    function's parameter list, every `.def(...)`/`.impl(...)` argument list and every
    `#define` that registers bindings are left out (those are compared as facts), so an
    edit outside them (a kernel body, a launch setting) changes this digest."""
    digest = hashlib.sha256()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment" or node.type == "parameter_list":
            continue
        if node.type in ("preproc_function_def", "preproc_def"):
            value = node.child_by_field_name("value")
            if value is not None and DEF_CALL.search(value.text or b""):
                continue
        if node.type == "argument_list" and node.parent is not None:
            function = node.parent.child_by_field_name("function")
            field_node = function.child_by_field_name("field") if function is not None else None
            if field_node is not None and (field_node.text or b"") in (b"def", b"impl"):
                continue
        if node.child_count == 0:
            digest.update(b" ".join((node.text or b"").split()) + b"\x00")
            continue
        stack.extend(reversed(node.children))
    return digest.hexdigest()

"""How a source file's bytes become the text its consumer reads, where that is not UTF-8
as written: the codec `compile()` decodes a Python file with (PEP 263), and which codecs
the readers accept.

Maintainers: pure functions over bytes, standard library only, so the tree index can ask
them without loading a parser (a stored report imports none). The Python reader
(impact/python/scaffold.py) decodes by `python_codec`; the byte searches that choose what
to parse (impact/index.py, impact/graph/bindings.py) keep what `searchable_as_bytes` says
they cannot search.
"""

from __future__ import annotations

import codecs
import io
import tokenize

PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
# The codecs a coding declaration may name and still be read (PEP 263: `compile()` decodes
# the file by its declaration, so the reader must too). Each maps the bytes 0x00-0x7f to
# ASCII one for one and no other byte to ASCII, with no state and no escapes, so a comment,
# a string and a line break are where every reader (a reviewer's diff, git, the compiler,
# this reader) sees them. Any other codec is refused as unreadable: `raw_unicode_escape`
# and `unicode_escape` turn `\u000a` in a "comment" into a line break, `utf-7` turns
# `+AAo-` into one, `utf-16` and the multi-byte East Asian codecs (shift_jis, gbk, big5)
# make other ASCII out of the same bytes. tests/test_python_decoding.py checks the table.
READABLE_CODECS = frozenset({
    "utf-8", "utf-8-sig", "ascii",
    *(f"iso8859-{n}" for n in (*range(1, 12), *range(13, 17))),
    *(f"cp{n}" for n in range(1250, 1259)),
})


def python_codec(source: bytes) -> str:
    """The normalised name of the codec `compile()` decodes a Python file with: its
    byte-order mark's or its coding declaration's (found as `tokenize.detect_encoding`
    finds it, as CPython's tokenizer does), UTF-8 when it has neither. Raises SyntaxError
    for a conflicting or malformed declaration, LookupError for an unknown codec."""
    declared, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return codecs.lookup(declared).name


def searchable_as_bytes(path: str, source: bytes) -> bool:
    """Whether a name looked for in a file's bytes is found exactly where it is in the
    text its reader sees: true of any file but a Python one whose bytes decode in a codec
    outside `READABLE_CODECS` (or whose declaration is broken), where an op's name may be
    spelled in other bytes (`utf-7`'s `+AG0-` is `m`); such a file must be parsed (and so
    refused), never passed over by a byte search."""
    if not path.endswith(PYTHON_SUFFIXES):
        return True
    try:
        return python_codec(source) in READABLE_CODECS
    except (SyntaxError, LookupError):
        return False

"""The Fact: one thing a parser saw in one file, as data.

Maintainers: every extractor (impact/python, impact/cpp, impact/descriptors)
returns a list of Facts and never raises on bad input: a file it cannot parse
yields one `parse-failure` Fact naming the reason. Facts hold plain
JSON-ready data so `impact facts` can print them and checks can compare them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from impact.kinds import FactKind

PARSE_FAILURE = FactKind.PARSE_FAILURE
CONTENT = FactKind.CONTENT
"""One per understood file: a digest of what it says, blind to comments and layout, so a
comment-only or whitespace-only edit leaves it equal."""


@dataclass(frozen=True)
class Fact:
    """`kind` says what was seen (e.g. 'function', 'kernel-argument-list'), `name` of what,
    `line` where (1-based; 0 for the whole file), `data` the kind's own fields."""

    kind: str
    name: str
    line: int
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "line": self.line, "data": dict(self.data)}

    def sort_key(self) -> tuple[int, str, str]:
        return (self.line, self.kind, self.name)


def parse_failure(path: str, reason: str, line: int = 0) -> Fact:
    """The one Fact a file yields when its parser cannot read it."""
    return Fact(PARSE_FAILURE, path, line, {"reason": reason})


INTERNAL_ERROR = "internal error"
"""How the reason of a parse-failure fact born of an extractor's own bug begins."""


def never_raises(path: str, language: str, extract: Callable[[], list[Fact]]) -> list[Fact]:
    """`extract()`, or one parse-failure fact when it raises: an extractor reports, never
    raises, so a bug in one fails its file closed (not understood) instead of the run."""
    try:
        return extract()
    except RecursionError:
        return [parse_failure(path, f"{language} source nested too deeply")]
    except Exception as exc:
        return [parse_failure(path, f"{INTERNAL_ERROR}: {language} extractor: "
                                    f"{type(exc).__name__}: {exc}")]


def sorted_facts(facts: list[Fact]) -> list[Fact]:
    """Facts in a stable order: by line, then kind, then name."""
    return sorted(facts, key=Fact.sort_key)


def content_fact(path: str, digest: str) -> Fact:
    """The `content` fact of a file whose layout-blind digest is `digest`."""
    return Fact(CONTENT, path, 0, {"digest": digest})

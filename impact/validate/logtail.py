"""The part of a child's log a report quotes: its first lines naming an error, then its end.

Maintainers: builds, test runs and bench rounds all fail the same way (a log far longer than
a report should hold, with the cause near the top and the tool's closing lines at the end),
so they share this one bounded read. The log is read as a regular file of bounded size
(impact/safefile.py): a link, a FIFO or a runaway log is named, never followed.
"""

from __future__ import annotations

import os

from impact.render.words import validate as words
from impact.safefile import read_regular

LIMIT_BYTES = 64 << 20
TAIL_LINES = 40
"""How much of a failed child's log's end the report quotes (the whole log stays beside the
side under --keep)."""
ERROR_LINES = 10
"""How many of the log's first lines naming an error the report quotes too: a compiler's
first errors sit far above the build tool's closing traceback."""


def tail(log: str | os.PathLike[str], lines: int = TAIL_LINES,
         error_lines: int = ERROR_LINES) -> list[str]:
    """The log's first `error_lines` lines that name an error above its last `lines`
    lines, an ellipsis between them, then those last lines."""
    try:
        data = read_regular(log, limit=LIMIT_BYTES)
    except OSError as exc:  # a link, a FIFO, a log past the limit, gone
        return [words.log_unreadable(exc)]
    text = data.decode("utf-8", "replace").splitlines()
    end = text[-lines:] if lines else []
    above = text[:-lines] if lines else text
    first = [line for line in above if "error" in line.lower()][:error_lines]
    return [*first, *(["…"] if first else []), *end]

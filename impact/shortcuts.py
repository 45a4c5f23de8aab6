"""Whether a report may take its shortcuts: the lazy tree index, the early N/A and the
import of no parser for a change outside every surface.

Maintainers: one switch, read from the environment. The shortcuts never change a report;
`IMPACT_FULL_PATH=1` turns them all off (the whole tree classified up front, every check
run) so a test can require byte-identical reports with and without them.
"""

from __future__ import annotations

import os

ENV = "IMPACT_FULL_PATH"


def enabled() -> bool:
    """True unless `IMPACT_FULL_PATH` is set to something other than '' or '0'."""
    return os.environ.get(ENV, "") in ("", "0")

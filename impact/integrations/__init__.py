"""Ways into `impact` from other tools: the GitHub Action's entry and the pre-commit hook.

Maintainers: these sit on top, beside the command line: each runs one report through the
library entry (`impact.api.report`, in a `Session.for_command`), shows a report that could
not run as the command line would (`impact.errors.failure`: one line, the documented exit
code), and decides nothing: the verdict and its exit code come from the report; an
integration only maps them onto its host through `--fail-on`.
"""

from __future__ import annotations

from impact.rollup import FAIL_ON, fails

__all__ = ["FAIL_ON", "fails"]

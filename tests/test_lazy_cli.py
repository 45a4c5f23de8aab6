"""`impact --version` (and building the command line at all) imports no parser, graph or
schema library (issue 16): they load when a report needs them."""

from __future__ import annotations

import subprocess
import sys

from impact.cli import FORMATS
from impact.render import RENDERERS

HEAVY = ("tree_sitter", "libcst", "jsonschema", "networkx", "yaml")


def test_version_imports_nothing_heavy() -> None:
    code = ("import sys\nfrom impact.cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


def test_the_api_names_still_resolve() -> None:
    import impact

    for name in impact.__all__:
        assert getattr(impact, name) is not None


def test_the_cli_format_names_are_the_renderers() -> None:
    assert sorted(FORMATS) == sorted(RENDERERS)

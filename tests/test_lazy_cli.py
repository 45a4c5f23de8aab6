"""`impact --version` (and building the command line at all) imports no parser, graph or
schema library (issue 16): they load when a report needs them."""

from __future__ import annotations

import subprocess
import sys

from impact.cli import FORMATS
from impact.errors import EXIT_NONE
from impact.render import RENDERERS

HEAVY = ("tree_sitter", "impact.python.scaffold", "jsonschema", "networkx", "yaml")


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


PARSERS = ("tree_sitter", "impact.python.scaffold", "networkx", "jsonschema", "yaml",
           "impact.python", "impact.cpp", "impact.descriptors", "impact.bindings")


def _imported_by_report(repo: str, head: str) -> list[str]:
    """The heavy modules a text report of `head` against `base` imports, in a fresh process."""
    code = ("import sys\nfrom impact.cli import main\n"
            f"code = main(['report', '--repo', {repo!r}, '--base', 'base', '--head', {head!r},"
            " '--no-cache'])\n"
            f"print(code, sorted(m for m in {PARSERS!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip().splitlines()[-1].split(" ", 1)


def test_a_report_outside_every_surface_imports_no_parser(build) -> None:
    """Issue 16: a change outside every surface is N/A without a graph, a parse or a schema
    library; a change on a surface does load them (so the probe can see an import)."""
    from impact.fixtures import Change, Scenario
    from impact.fixtures import edits as e
    from impact.fixtures.tree import rocke_tree_files

    def outside(files: dict[str, bytes]) -> None:
        files["docs/notes/README.md"] = b"notes\n"

    repo = build(Scenario(base=rocke_tree_files(),
                          head=(Change("outside", edits=(outside,)),),
                          target=(Change("body", edits=(e.edit_comment(e.GFX950_DENSE),)),)))
    code, loaded = _imported_by_report(str(repo.path), "head")
    assert (code, loaded) == (str(EXIT_NONE), "[]")
    code, loaded = _imported_by_report(str(repo.path), "target")  # a comment edit: NONE
    assert code == str(EXIT_NONE)
    assert all(name in loaded for name in ("networkx", "impact.descriptors",
                                           "impact.python")), loaded

"""The versions a document carries: the installed tool's and the report schema's.

Maintainers: a leaf. It imports nothing from impact, so the report, the emitter
and the CLI can all read it without importing one another.
"""

from __future__ import annotations

from importlib import metadata

# The report document's schema version (impact/contracts/report.schema.json).
SCHEMA_VERSION = "0.3"


def tool_version() -> str:
    """The installed distribution's version, or `0+unknown` when run from a bare checkout."""
    try:
        return metadata.version("kernel-impact")
    except metadata.PackageNotFoundError:
        return "0+unknown"

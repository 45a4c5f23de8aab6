"""`impact facts`: the facts of named files at one revision, as schema-checked JSON.

Maintainers: reads through the caches it is handed (a Session's, impact/session.py) and
writes nothing; the document is checked against facts.schema.json before it is returned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from impact.caches import Caches
from impact.contracts import validate
from impact.errors import BadUsage
from impact.extract import FactCache, snapshot_facts
from impact.git import open_snapshot
from impact.surface import load_surface_map

FACTS_SCHEMA = "facts.schema.json"


def facts_document(repo: str, rev: str, paths: list[str], surface_map: str | None,
                   caches: Caches | None = None) -> dict[str, Any]:
    """Every fact in `paths` at `rev`, with each file's blob, language and surface, read
    through `caches` (else the active ones, else fresh ones)."""
    revision, snapshot = open_snapshot(repo, rev)
    missing = [p for p in paths if p not in snapshot]
    if missing:
        raise BadUsage(f"no file {', '.join(missing)} at {rev}",
                       "give repository-relative paths of files that exist at that revision")
    surface = load_surface_map(surface_map, snapshot)
    files = {
        path: {
            "blob": snapshot[path].sha,
            "language": surface.describe(path).language,
            "surface": surface.describe(path).kind,
            "facts": [f.to_json() for f in facts],
        }
        for path, facts in snapshot_facts(snapshot, paths,
                                          FactCache(surface, caches=caches)).items()
    }
    doc = {"schema_version": "0.1", "repository": str(Path(repo).resolve()),
           "revision": {"spelled": revision.spelled, "sha": revision.sha},
           "surface_map": surface.source, "files": files}
    validate(doc, FACTS_SCHEMA)
    return doc


def facts_json(document: dict[str, Any]) -> str:
    """The facts document as `impact facts` prints it: sorted, deterministic JSON."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

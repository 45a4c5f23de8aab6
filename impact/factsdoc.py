"""`impact facts`: the facts of named files at one revision, as schema-checked JSON."""

from __future__ import annotations

import json
from pathlib import Path

from impact.contracts import validate
from impact.errors import BadUsage
from impact.extract import FactCache, snapshot_facts
from impact.git import open_snapshot
from impact.surface import load_surface_map

FACTS_SCHEMA = "facts.schema.json"


def facts_document(repo: str, rev: str, paths: list[str], surface_map: str | None) -> str:
    """Sorted, deterministic JSON of every fact in `paths` at `rev`."""
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
        for path, facts in snapshot_facts(snapshot, paths, FactCache(surface)).items()
    }
    doc = {"schema_version": "0.1", "repository": str(Path(repo).resolve()),
           "revision": {"spelled": revision.spelled, "sha": revision.sha},
           "surface_map": surface.source, "files": files}
    validate(doc, FACTS_SCHEMA)
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

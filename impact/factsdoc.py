"""`impact facts`: the facts of named files at one revision, as schema-checked JSON."""

from __future__ import annotations

import json
from pathlib import Path

from impact.contracts import validate
from impact.errors import BadUsage
from impact.extract import FactCache, language_of
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
    cache = FactCache()
    files = {}
    for path in sorted(set(paths)):
        entry = surface.classify(path)
        language = language_of(path, surface)
        files[path] = {
            "blob": snapshot[path].sha,
            "language": language,
            "surface": entry.kind if entry else "outside",
            "facts": [f.to_json() for f in cache.facts(snapshot, path, language)],
        }
    doc = {"schema_version": "0.1", "repository": str(Path(repo).resolve()),
           "revision": {"spelled": revision.spelled, "sha": revision.sha},
           "surface_map": surface.source, "files": files}
    validate(doc, FACTS_SCHEMA)
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


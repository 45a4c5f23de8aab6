"""What a repository asks of impact: its defaults and its waivers, read from the base.

Why: a team sets its gate and format once, in the repository (`[tool.impact]` in
`pyproject.toml`, or `.impact/config.toml`, which wins), and acknowledges a reviewed
finding in `.impact/waivers.toml` with why and until when. Like the surface map, both
are read from the base tree, never the head: the change under review does not set its
own gate or waive its own findings. Each file is checked against its schema in
impact/contracts; a file that is not TOML, or is off its schema, is one clear error,
never silently ignored.
"""

from __future__ import annotations

import datetime
import tomllib
from dataclasses import dataclass
from typing import Any

from impact.errors import ImpactError
from impact.git import Snapshot

CONFIG = ".impact/config.toml"
PYPROJECT = "pyproject.toml"
WAIVERS = ".impact/waivers.toml"
CONFIG_SCHEMA = "config.schema.json"
WAIVERS_SCHEMA = "waivers.schema.json"


class BadPolicy(ImpactError):
    """The repository's impact configuration or waivers file cannot be used."""


@dataclass(frozen=True)
class Waiver:
    """One acknowledged finding: its stable id, why, until which day, and the digest of
    its copies when it was reviewed (`impact.waivers.copies_digest`)."""

    finding: str
    reason: str
    copies: str
    expires: datetime.date
    subject: str = ""

    def to_toml(self) -> str:
        lines = ["[[waiver]]", f"finding = {_quoted(self.finding)}"]
        if self.subject:
            lines.append(f"subject = {_quoted(self.subject)}")
        lines += [f"reason = {_quoted(self.reason)}", f"copies = {_quoted(self.copies)}",
                  f"expires = {_quoted(self.expires.isoformat())}"]
        return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    import json

    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Policy:
    """The defaults (None: not set) and the waivers a repository's base sets, and the
    file each came from."""

    fail_on: str | None = None
    format: str | None = None
    config_source: str = ""
    waivers: tuple[Waiver, ...] = ()


NO_POLICY = Policy()


def _loaded(data: bytes, source: str, schema: str) -> Any:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadPolicy(f"{source} is not valid TOML ({exc})", _fix(source, schema)) from None


def _fix(source: str, schema: str) -> str:
    return f"correct {source} (its schema is impact/contracts/{schema})"


def _checked(doc: Any, source: str, schema: str) -> dict[str, Any]:
    """`doc`, or the one error naming where it first leaves its schema."""
    import jsonschema

    from impact.contracts import load_schema

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(load_schema(schema)).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        raise BadPolicy(f"{source} does not fit its schema at {where}: {error.message}",
                        _fix(source, schema))
    return doc


def parse_config(data: bytes, source: str = CONFIG) -> dict[str, Any]:
    """The configuration `.impact/config.toml` holds, checked against its schema."""
    return _checked(_loaded(data, source, CONFIG_SCHEMA), source, CONFIG_SCHEMA)


def parse_pyproject(data: bytes) -> dict[str, Any]:
    """The `[tool.impact]` table of a pyproject.toml, checked; {} when it has none. A
    pyproject.toml that is not TOML is another tool's problem unless it names impact."""
    source = f"{PYPROJECT} [tool.impact]"
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if b"impact" not in data:
            return {}
        raise BadPolicy(f"{PYPROJECT} is not valid TOML ({exc})",
                        _fix(source, CONFIG_SCHEMA)) from None
    tool = doc.get("tool", {})
    table = tool.get("impact") if isinstance(tool, dict) else None
    return {} if table is None else _checked(table, source, CONFIG_SCHEMA)


def parse_waivers(data: bytes, source: str = WAIVERS) -> tuple[Waiver, ...]:
    """The waivers in `data`, checked against their schema; a date that is no day is
    refused as the schema's other problems are."""
    doc = _checked(_loaded(data, source, WAIVERS_SCHEMA), source, WAIVERS_SCHEMA)
    out = []
    for index, item in enumerate(doc["waiver"]):
        try:
            expires = datetime.date.fromisoformat(item["expires"])
        except ValueError:
            raise BadPolicy(f"{source} waiver {index + 1}: expires {item['expires']!r} is no "
                            "day", "write it as YYYY-MM-DD") from None
        out.append(Waiver(item["finding"], item["reason"], item["copies"], expires,
                          item.get("subject", "")))
    return tuple(out)


def _read(tree: Snapshot, path: str) -> bytes | None:
    if path not in tree:
        return None
    try:
        return tree.read(path)
    except Exception as exc:  # a missing blob, a gitlink: the file cannot be read
        raise BadPolicy(f"{path} cannot be read at the base ({exc})", "fetch the object") \
            from None


def read_policy(tree: Snapshot) -> Policy:
    """The policy `tree` (the base) sets: `.impact/config.toml`, else `[tool.impact]` of
    `pyproject.toml`, and `.impact/waivers.toml`."""
    config: dict[str, Any] = {}
    source = ""
    own = _read(tree, CONFIG)
    if own is not None:
        config, source = parse_config(own), CONFIG
    else:
        pyproject = _read(tree, PYPROJECT)
        config = parse_pyproject(pyproject) if pyproject is not None else {}
        source = f"{PYPROJECT} [tool.impact]" if config else ""
    waivers = _read(tree, WAIVERS)
    return Policy(fail_on=config.get("fail-on"), format=config.get("format"),
                  config_source=source,
                  waivers=parse_waivers(waivers) if waivers is not None else ())

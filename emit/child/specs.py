"""A variant's spec (a dict of field values) as JSON text and as a hashable key.

Maintainers: standard library only; pure functions of the dict, so the document's order
and the probe tables' deduplication agree.
"""

from __future__ import annotations

import json


def spec_json(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, default=repr)


_PLAIN = frozenset({int, bool, str, type(None)})


def spec_key(spec: dict):
    """A hashable stand-in for `spec_json(spec)`, equal exactly when the JSON texts are
    (each value with its type, so 1, 1.0 and True stay apart), without encoding JSON: a
    family of 900 variants makes some 10^5 of these."""
    try:
        key = tuple((k, type(v), v) for k, v in sorted(spec.items()))
        hash(key)
    except TypeError:  # a list or dict value (or keys that do not sort): the JSON text
        return spec_json(spec)
    if any(type(v) not in _PLAIN for _, _, v in key):
        return spec_json(spec)
    return key

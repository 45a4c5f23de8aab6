"""Architecture lists in descriptors: LLVM generic targets expanded, suspicious ids named."""

# Maintainers: the generic-target table lives in impact/contracts/generic_targets.json (package
# data, read once); this module never touches git or the working tree and never raises.

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

GENERIC_TARGETS = "generic_targets.json"
# What the loader's isPlausibleArchBaseId and the packer's _reject_nonbare_arch accept.
_BARE_ARCH = re.compile(r"gfx[a-z0-9_-]+")


@cache
def generic_targets() -> dict[str, tuple[str, ...]]:
    """Each LLVM generic processor id and the concrete processors it covers."""
    text = resources.files("impact.contracts").joinpath(GENERIC_TARGETS).read_text("utf-8")
    table: dict[str, Any] = json.loads(text)
    return {name: tuple(members) for name, members in table["targets"].items()}


def expand_arch(archs: list[str]) -> list[str]:
    """`archs` with each known generic target replaced by its members.

    Concrete (and unrecognised) ids come first, in the order given; the members of the
    generic targets follow, sorted; no id appears twice. A feature-suffixed id such as
    `gfx942:xnack-` is kept as written (see `arch_problems`), never silently stripped.
    """
    table = generic_targets()
    concrete: list[str] = []
    members: set[str] = set()
    for arch in archs:
        if not isinstance(arch, str):
            continue
        if arch in table:
            members.update(table[arch])
        elif arch not in concrete:
            concrete.append(arch)
    return concrete + sorted(members - set(concrete))


def arch_problems(archs: list[Any]) -> list[str]:
    """What the loader or packer would reject, or silently never match, in an arch list."""
    problems: list[str] = []
    table = generic_targets()
    for arch in archs:
        if not isinstance(arch, str):
            problems.append(f"{arch!r}: not a string")
        elif ":" in arch:
            problems.append(f"{arch}: feature suffix; the packer rejects it and it matches "
                            "no shard")
        elif not _BARE_ARCH.fullmatch(arch):
            problems.append(f"{arch}: not a bare gfx id")
        elif arch.endswith("-generic") and arch not in table:
            problems.append(f"{arch}: generic target missing from {GENERIC_TARGETS}")
    return problems

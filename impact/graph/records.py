"""The records the symbol graph hands out: what checks read instead of graph nodes.

Maintainers: frozen data only, no behaviour beyond small derived properties. A record's
`id` is opaque outside `impact/graph/`: compare, sort or print it, never split it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from impact.kinds import FactKind

ALWAYS = "always"  # the guard of a builder argument declared on every path


class PairedBy(enum.StrEnum):
    """How a copy of an argument list was paired with the builder it restates."""

    DECLARED = "declared"               # a profile's launch_surface entry names both
    NAMES = "names"                     # its names equal the builder's (all or always)
    AS_AT_BASE = "as at the base"       # the builder it restated at the base
    BUILDER_UNREADABLE = "builder unreadable"  # that builder's file no longer parses
    CLOSEST = "closest"                 # the b.param builder sharing the most names
    SAME_PACK = "same pack"             # a launch(): the only list of its file
    LAUNCHER_NAME = "launcher name"     # a launch(): the list its launcher is named for
    PACK_ORDER = "order in the pack"    # a launch(): the list in the same position
    BASE_PAIRING = "base pairing"       # a kpack signature: its builder at the base
    CLOSEST_NAMES = "closest names"     # a kpack signature: the closest b.param builder
    PRODUCER = "producer"               # an AOT kernel: the builder its producer calls
    SAME_SHAPE = "same kinds and sizes"  # a list with no names: the named list it equals
    OTHER_ARCH_ONLY = "only another arch's builder"  # not paired: none of its own arch fits
    NONE = ""                           # not paired


@dataclass(frozen=True)
class Param:
    """One `b.param` of a builder, in declaration order."""

    name: str
    type_text: str
    guard: str
    index: int
    line: int


@dataclass(frozen=True)
class SignatureEntry:
    """One entry of a signature factory (`SignatureBuilder` calls)."""

    name: str
    type_text: str | None
    guard: str
    method: str


@dataclass(frozen=True)
class Builder:
    """A function that declares kernel arguments with `b.param`, or builds a signature."""

    id: str
    module: str
    name: str
    path: str
    line: int
    params: tuple[Param, ...] = ()
    signature: tuple[SignatureEntry, ...] = ()
    # What keeps its argument list from being read: a `b.param` whose name is not a
    # literal or that runs per element of a comprehension, or a helper it reaches that
    # declares arguments on a builder passed to it. A list with any is never compared.
    unread: tuple[Unread, ...] = ()

    @property
    def uses_param(self) -> bool:
        return bool(self.params)

    @property
    def names(self) -> tuple[str, ...]:
        """Every argument it declares, in order."""
        if self.params:
            return tuple(p.name for p in self.params)
        return tuple(e.name for e in self.signature)

    @property
    def always_names(self) -> tuple[str, ...]:
        """The arguments it declares on every path (guard 'always')."""
        if self.params:
            return tuple(p.name for p in self.params if p.guard == ALWAYS)
        return tuple(e.name for e in self.signature if e.guard == ALWAYS)


@dataclass(frozen=True)
class Pairing:
    """The builder a copy restates, and how the graph found it (None: no builder)."""

    builder: Builder | None
    how: PairedBy = PairedBy.NONE


@dataclass(frozen=True)
class ListEntry:
    """One entry of a static argument list: kind, size (None when unknown), name, line."""

    kind: str | None
    size: int | None
    name: str
    line: int


@dataclass(frozen=True)
class Unread:
    """A construct of a list the reader could not settle statically, and its line."""

    line: int
    construct: str


@dataclass(frozen=True)
class ArgList:
    """A C++ `KernelArgument` list (`subject` is `path:name`), with its pairing."""

    id: str
    path: str
    name: str
    function: str
    line: int
    entries: tuple[ListEntry, ...]
    dynamic: bool
    pairing: Pairing
    unread: tuple[Unread, ...] = ()

    @property
    def subject(self) -> str:
        return f"{self.path}:{self.name}"

    @property
    def shape(self) -> tuple[Any, ...]:
        """What the list restates (each entry's kind, size and name; whether it is built at
        run time): equal shapes mean the copy did not move."""
        return tuple((e.kind, e.size, e.name) for e in self.entries), self.dynamic


@dataclass(frozen=True)
class LaunchArgument:
    """One kernel argument a launch() passes: its text, the name it passes (None when the
    expression names nothing), and its kind and size where the file settles them."""

    text: str
    name: str | None
    kind: str | None
    size: int | None
    line: int


@dataclass(frozen=True)
class LaunchCall:
    """A positional C++ `launch()` call, with the builder whose list it passes.
    `arguments` are the kernel arguments only; the stream, dimensions and other launch
    parameters before them are `launch_parameters`."""

    id: str
    path: str
    name: str
    function: str
    cls: str
    receiver: str
    line: int
    arguments: tuple[str, ...]
    pairing: Pairing
    kernel_arguments: tuple[LaunchArgument, ...] = ()
    launch_parameters: tuple[str, ...] = ()

    @property
    def subject(self) -> str:
        return f"{self.path}:{self.name}"

    @property
    def shape(self) -> tuple[Any, ...]:
        """What the call passes (its arguments' texts, names, kinds and sizes): equal
        shapes mean the copy did not move."""
        return self.arguments, tuple((a.name, a.kind, a.size) for a in self.kernel_arguments)


@dataclass(frozen=True)
class VariantLaunch:
    """One launch a shipped variant makes: its kind (`rocke`, `kpack`), the module and
    builder it names, and a recorded signature (kpack) as raw entries."""

    kind: str
    source: str | None
    builder: str | None
    launch: str | None
    signature: tuple[Mapping[str, Any], ...] | None


@dataclass(frozen=True)
class Variant:
    """A shipped descriptor variant: where, which architectures (generic targets
    expanded; an inline UKD without its own takes its KDP's), which launches, the KDP
    that holds it inline (None for a standalone UKD) and its own `id` (a KDP names a
    standalone UKD by it)."""

    id: str
    path: str
    name: str
    line: int
    archs: tuple[str, ...]
    kdp: str | None
    launches: tuple[VariantLaunch, ...]
    ukd_id: str | None = None


@dataclass(frozen=True)
class KpackSignature:
    """A packed descriptor's recorded signature: one per distinct signature in a file
    (`subject` is `path:kpack-signature:variant`), with its pairing."""

    path: str
    variant: str
    line: int
    entries: tuple[ListEntry, ...]
    pairing: Pairing

    @property
    def subject(self) -> str:
        return f"{self.path}:kpack-signature:{self.variant}"


@dataclass(frozen=True)
class AotArgument:
    name: str
    type_text: str


@dataclass(frozen=True)
class AotKernel:
    """An AOT catalog kernel's `args_signature`, paired with the b.param builder its
    family's producer script reaches (names differ there by design)."""

    id: str
    path: str
    name: str
    line: int
    arguments: tuple[AotArgument, ...]
    pairing: Pairing

    @property
    def subject(self) -> str:
        return f"{self.path}:{self.name}"


@dataclass(frozen=True)
class Kdp:
    """A KDP a descriptor file declares, with the ids of the standalone UKDs it names."""

    name: str
    path: str
    line: int
    ukd_refs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    """A KDP family, as the variant census and the pack archs resolve it: the KDP file
    that holds it, the KDP's line there, and the variants it ships by name -> (file,
    line): its inline UKDs and the standalone UKDs it names. `broken` says why its KDP
    file does not parse (then it ships nothing the graph can see). Read-only."""

    name: str
    path: str
    line: int
    variants: dict[str, tuple[str, int]] = field(default_factory=dict)
    broken: str | None = None


@dataclass(frozen=True)
class Assignment:
    """A module-level name bound by one simple assignment, with the text of its value."""

    module: str
    name: str
    value: str




@dataclass(frozen=True)
class FunctionParam:
    """One parameter of a function definition."""

    name: str
    kind: str  # "positional", "var-positional", "keyword-only", "var-keyword"
    has_default: bool

@dataclass(frozen=True)
class DefinitionSite:
    """One place a definition is made (a name may be defined under each branch)."""

    line: int
    digest: str | None  # the body's digest; the value's for an assignment
    params: tuple[FunctionParam, ...] = ()

@dataclass(frozen=True)
class Definition:
    """A function, class or module-level assignment of one module, every site of it."""

    id: str
    kind: FactKind
    module: str
    name: str  # the qualname: `f`, `Cls`, `Cls.method`
    path: str
    sites: tuple[DefinitionSite, ...]

    @property
    def line(self) -> int:
        """The first site's line (0 when the graph holds no site)."""
        return self.sites[0].line if self.sites else 0

    @property
    def signature(self) -> str:
        """The parameter lists of every site, as one comparable text."""
        return " | ".join(
            "(" + ", ".join(f"{p.kind[:3]} {p.name}" + ("=" if p.has_default else "")
                            for p in site.params) + ")"
            for site in self.sites)

class ReadHow(enum.StrEnum):
    """How a reader reaches a definition."""

    IMPORTS = "imports"    # a module binds it by an import
    READS = "reads"        # a function reads it by name
    INHERITS = "inherits"  # a class derives from it

@dataclass(frozen=True, order=True)
class Reader:
    """A module that imports a definition, or a function or class that reads it."""

    id: str
    module: str
    function: str | None  # None for a module-level import
    path: str
    line: int  # the reading definition's first line; 0 for a module
    how: ReadHow

@dataclass(frozen=True)
class Locator:
    """A profile's `file:symbol` (symbol None when it names the whole file)."""

    raw: str
    file: str
    symbol: str | None

@dataclass(frozen=True)
class LaunchSurfaceEntry:
    """One `launch_surface:` entry of a tool profile; a None locator was `none`."""

    profile: str
    name: str
    line: int
    python_source: Locator | None
    cpp_mirror: Locator | None
    kmd_fields: tuple[str, ...]
    guard: str | None
    test: str | None

@dataclass(frozen=True, order=True)
class SymbolString:
    """A native symbol string at one site: named by a descriptor (`holder` is the
    field's role) or declared by a C++ constant (`holder` is the constant's name)."""

    value: str
    path: str
    line: int
    holder: str


@dataclass(frozen=True)
class MetadataRead:
    """One read of a KMD metadata field by a C++ pack: the field (None when the reader
    could not settle it: `construct` names what it saw), the constant it was spelled
    through, and the lambda or helper that forwarded it to the getter (`via`)."""

    path: str
    line: int
    field: str | None
    constant: str | None
    via: str | None
    construct: str | None
    function: str | None


@dataclass(frozen=True)
class DescriptorId:
    """A descriptor file's own `id`, with its type."""

    path: str
    type: str
    id: str


@dataclass(frozen=True)
class KmdField:
    """One field a KMD declares."""

    path: str
    line: int
    name: str
    kmd: str | None  # the KMD's id


@dataclass(frozen=True)
class Engine:
    """A UED's engine: the ids it refers to (its KMD `metadata`, its UHD `heuristic`),
    the knobs it names (fields of that KMD) and the native symbols its file names."""

    path: str
    line: int
    name: str
    id: str | None
    metadata: str | None
    heuristic: str | None
    knobs: tuple[str, ...]
    symbols: tuple[str, ...]


__all__ = [
    "ALWAYS",
    "AotArgument",
    "AotKernel",
    "ArgList",
    "Assignment",
    "Builder",
    "Definition",
    "DefinitionSite",
    "DescriptorId",
    "Engine",
    "Family",
    "FunctionParam",
    "Kdp",
    "KmdField",
    "KpackSignature",
    "LaunchArgument",
    "LaunchCall",
    "LaunchSurfaceEntry",
    "ListEntry",
    "Locator",
    "MetadataRead",
    "PairedBy",
    "Pairing",
    "Param",
    "ReadHow",
    "Reader",
    "SignatureEntry",
    "SymbolString",
    "Unread",
    "Variant",
    "VariantLaunch",
]

"""The child's watch on the tree's own code: the builder and the lowering wrapped, so one
producer call shows the spec it built, what the builder returned and each kernel lowered;
and the support predicate found as the tree resolves it.

The child only watches: it wraps the builder the UKD names (to see the spec object the
producer built and what the builder returned) and the tree's lowering function (to see
each kernel lowered, with its IR text captured for the chosen flavor). Nothing here knows a
name of a particular tree's: the lowering, its re-exports, the predicate resolvers and the
predicates' names come from the rules file (`Emitter`); what is read of the objects (a
`capture_ir_text` or flavor keyword, a `backend`) is the protocol every such tree follows.

Maintainers: standard library only; the tree's modules are imported here and in
emit/child/build.py, never elsewhere.
"""

from __future__ import annotations

import functools
import importlib
import inspect

from emit.child.context import Emitter, source_module


def parameters(fn) -> dict:
    """`fn`'s parameters by name ({} when it has no signature to read)."""
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}


class Capture:
    """What one producer call handed the builder and the lowering (see the install_*)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.entered = False
        self.specs: list = []
        self.built: list = []
        self.lowered: list = []  # (kernel, arch, result)
        self.backends: list = []


def install_lowering(cap: Capture, flavor: str | None, emitter: Emitter):
    """Wrap the tree's lowering function so each kernel the producer lowers is recorded,
    its IR text captured and lowered for `flavor`; returns the tree's original function."""
    module_name, function = emitter.lowering
    module = importlib.import_module(module_name)
    original = getattr(module, function)
    params = parameters(original)

    @functools.wraps(original)
    def lowering(kernel, *args, **kwargs):
        cap.backends.append(kwargs.get("backend"))
        if "capture_ir_text" in params:
            kwargs["capture_ir_text"] = True
        if flavor:
            for name in ("flavor", "llvm_flavor"):
                if name in params:
                    kwargs[name] = flavor
        result = original(kernel, *args, **kwargs)
        cap.lowered.append((kernel, kwargs.get("arch"), result))
        return result

    setattr(module, function, lowering)
    for name in emitter.lowering_reexports:
        try:
            reexport = importlib.import_module(name)
        except Exception:
            continue
        if getattr(reexport, function, None) is original:
            setattr(reexport, function, lowering)
    return original


def install_builder(cap: Capture, source: str, builder: str):
    """Wrap the builder the UKD names, in the module the UKD names, so the spec object the
    producer builds (and what the builder returns) is seen; returns (module, the tree's
    builder), or (None, None) when the module or the builder is not there (the producer
    then says so itself)."""
    try:
        module = importlib.import_module(source_module(source))
    except Exception:
        return None, None
    original = getattr(module, builder, None)
    if not callable(original):
        return module, None

    @functools.wraps(original)
    def building(spec_obj, *args, **kwargs):
        cap.entered = True
        cap.specs.append(spec_obj)
        built = original(spec_obj, *args, **kwargs)
        cap.built.append(built)
        return built

    setattr(module, builder, building)
    return module, original


def tree_predicate(producer_module, module, builder: str, emitter: Emitter):
    """The builder's support predicate as the tree resolves it (the producer's own
    resolver when it has one), else by the library's naming rules; or None."""
    for name in emitter.predicate_resolvers:
        resolve = getattr(producer_module, name, None)
        if not callable(resolve) or module is None:
            continue
        try:
            found = resolve(module, builder)
        except Exception:
            continue
        if isinstance(found, tuple) and len(found) == 2:
            found = found[1]
        if callable(found):
            return found
    if module is None:
        return None
    for name in _predicate_names(builder, emitter):
        fn = getattr(module, name, None)
        if callable(fn):
            return fn
    return None


def _predicate_names(builder: str, emitter: Emitter) -> list[str]:
    """The names a builder's module may give its predicate, in order: `{kernel}` is the
    builder's name less the builder prefix (a name that needs it is skipped for a builder
    without the prefix)."""
    prefix = emitter.builder_prefix
    kernel = builder[len(prefix):] if builder.startswith(prefix) else None
    return [template.replace("{kernel}", kernel) if "{kernel}" in template else template
            for template in emitter.support_predicates
            if "{kernel}" not in template or kernel is not None]


def verdict(result) -> tuple[bool, str]:
    """A predicate's answer: `(ok, why)` or a bare truth value."""
    if isinstance(result, tuple) and len(result) == 2:
        return bool(result[0]), str(result[1])
    return bool(result), ""

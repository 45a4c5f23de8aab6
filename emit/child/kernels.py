"""One lowered kernel as the child's document records it: its launch name, its ordered
arguments, the sha256 of its LLVM IR text and what the code-object compiler is handed.

Maintainers: reads the objects the tree's lowering returned, by attribute, and imports
nothing; the argument types are told apart by the DSL module's `PtrType` and `ScalarType`
(`dsl`, the first of the map's dsl_modules that imports, or None).
"""

from __future__ import annotations

import hashlib

# Where a lowering result may carry its LLVM IR text, first found wins.
_IR_TEXT = ("ir_text", "llvm_ir", "ir")


def _arg_records(kernel, dsl) -> list[dict]:
    ptr_type = getattr(dsl, "PtrType", None)
    scalar_type = getattr(dsl, "ScalarType", None)
    out = []
    for p in kernel.params:
        ty = p.type
        if ptr_type is not None and isinstance(ty, ptr_type):
            kind, size = "global_buffer", 8
        elif scalar_type is None or isinstance(ty, scalar_type):
            # The size the tree's own type states; 0 (unknown) when it states none.
            size = getattr(ty, "size", 0)
            kind, size = "by_value", size if isinstance(size, int) else 0
        else:
            kind, size = "unknown", 0
        out.append({"name": str(p.name), "kind": kind, "size": size})
    return out


def _launch_of(kernel, built: list, default):
    """The launch name a kernel has in what the builder returned (a module of named
    kernels), else the UKD's own launch."""
    for item in built:
        kernels = getattr(item, "kernels", None)
        if isinstance(kernels, dict):
            for name, candidate in kernels.items():
                if candidate is kernel:
                    return str(name)
    return default


def kernel_record(kernel, arch: str, result, built: list, launch, dsl, lowering: str) -> dict:
    """One lowered kernel as the document records it; raises when the result of the
    lowering function (named `lowering`) lacks what the record needs."""
    ir_text = next((text for text in (getattr(result, name, None) for name in _IR_TEXT)
                    if isinstance(text, str) and text), None)
    if ir_text is None:
        raise ValueError(f"the tree's {lowering} returned no IR text")
    symbol = getattr(result, "kernel_name", None) or getattr(kernel, "name", None)
    if not isinstance(symbol, str):
        raise ValueError("the lowered kernel has no name")
    return {
        "arch": arch,
        "launch": _launch_of(kernel, built, launch),
        "symbol": symbol,
        "args": _arg_records(kernel, dsl),
        "ir_sha256": hashlib.sha256(ir_text.encode("utf-8")).hexdigest(),
        "compiler": {
            "isa": str(getattr(result, "isa", "")),
            "options": [str(o) for o in (getattr(result, "options", None) or ())],
            "fresh_process": True,
        },
    }

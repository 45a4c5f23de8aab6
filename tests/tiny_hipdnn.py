"""A tiny hipDNN tree at the real paths, for the survey of issue 26: rocKE builders of two
archs, native packs with a KernelArgument list and a launch(), descriptors. Each test builds
what it needs from these strings; nothing here reads the network or a scratch folder."""

from __future__ import annotations

LIB = "dnn-providers/hip-kernel-provider/rocke/library/kernels/"
PACKS = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/packs/"
B942 = LIB + "gfx942/attention_dense.py"
B950 = LIB + "gfx950/attention_dense.py"
P950 = PACKS + "Gfx950AttentionDenseNative.cpp"
P942 = PACKS + "Gfx942AttentionDenseNative.cpp"


def builder(names, types=None):
    lines = ["from rocke.core.ir import IRBuilder, PtrType, F16, F32, I32\n\n\n",
             "def _build_attention_dense(spec):\n", "    b = IRBuilder(spec.name)\n"]
    for n in names:
        t = (types or {}).get(n) or ('PtrType(F16, "global")' if n.endswith("_ptr") else
                                     "F32" if n == "scale" else "I32")
        lines.append(f'    {n.removesuffix("_ptr")} = b.param("{n}", {t})\n')
    lines.append("    return b.finish()\n")
    return "".join(lines)


SIG950 = ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "scale", "batch", "seqlen_q", "seqlen_kv"]
SIG942 = ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "scale"]
LAUNCH950 = ("q.ptr, k.ptr, v.ptr, o.ptr, binding.scale, static_cast<int32_t>(p.batch), "
             "static_cast<int32_t>(p.seqLenQ), static_cast<int32_t>(p.seqLenKv)")


def pack(names, launch, extra=""):
    kinds = {n: ("global_buffer", "PTR") if n.endswith("_ptr") else
             ("by_value", "F32") if n == "scale" else ("by_value", "I32") for n in names}
    entries = ",\n            ".join(
        f'KernelArgument{{"{kinds[n][0]}", {kinds[n][1]}, {8 * i}, "{n}"}}'
        for i, n in enumerate(names))
    return f"""#include <cstdint>
#include <vector>

namespace
{{
{extra}
struct AttentionDenseBinding
{{
    float scale = 0.0f;
}};

std::vector<KernelArgument> attentionDenseKernelSignature()
{{
    constexpr auto PTR = static_cast<uint32_t>(sizeof(void*));
    constexpr auto I32 = static_cast<uint32_t>(sizeof(int32_t));
    constexpr auto F32 = static_cast<uint32_t>(sizeof(float));
    return {{{entries}}};
}}

class Handler
{{
public:
    void launch(const Handle& handle, const Prepared& prepared) const
    {{
        const AttentionDenseBinding& binding = prepared.binding();
        const auto& p = prepared.problem();
        void* const* q = prepared.q();
        prepared.kernelForStream(handle.getStream())
            .launch(handle.getStream(), {launch});
    }}
}};
}} // namespace
"""


def pack942(launch="q.ptr, k.ptr, v.ptr, o.ptr, binding.scale"):
    return f"""#include <cstdint>

namespace
{{
struct AttentionDenseBinding
{{
    float scale = 0.0f;
}};

class Handler942
{{
public:
    void launch(const Handle& handle, const Prepared& prepared) const
    {{
        const AttentionDenseBinding& binding = prepared.binding();
        prepared.kernel().launch(handle.getStream(), {launch});
    }}
}};
}} // namespace
"""

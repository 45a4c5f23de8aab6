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


DESC = ("dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/descriptors/rocKE/"
        "gfx950_attention_dense/gfx950_attention_dense")
KMD, UED, UHD = DESC + ".kmd.json", DESC + ".ued.json", DESC + ".uhd.json"
KMD_ID, UHD_ID = "5ee07e60-3ca8-4126-9e2f-50002e56953f", "fdd1435f-05f2-4934-a89f-021a622572c5"
SYMBOL = "hipkernel.gfx950_attention_dense.graph_match"


def kmd(fields=("dtype", "head_size", "block_m"), ident=KMD_ID):
    body = ",\n".join(f'    {{"name": "{f}", "type": "{"string" if f == "dtype" else "int"}"}}'
                      for f in fields)
    return (f'{{\n  "version": "1.0",\n  "id": "{ident}",\n  "name": "fields",\n'
            f'  "fields": [\n{body}\n  ]\n}}\n')


def ued(metadata=KMD_ID, heuristic=UHD_ID, knobs=("head_size", "block_m")):
    listed = ", ".join(f'"{k}"' for k in knobs)
    return (f'{{\n  "version": "1.0",\n  "id": "4159a8b6-84b4-4495-9ea9-5cfd2abfd3ca",\n'
            f'  "name": "hipkernel:Gfx950AttentionDense",\n  "sdk_version": "1.0.0",\n'
            f'  "graph_match": {{"native": "{SYMBOL}"}},\n  "metadata": "{metadata}",\n'
            f'  "heuristic": "{heuristic}",\n  "knobs": [{listed}]\n}}\n')


def uhd(ident=UHD_ID):
    return (f'{{\n  "version": "1.0",\n  "id": "{ident}",\n  "name": "selector",\n'
            f'  "kind": "native",\n  "payload": "hipkernel.gfx950_attention_dense.score"\n}}\n')


MATCHER = f"""#include <optional>

namespace
{{
constexpr std::string_view GRAPH_MATCHER_SYMBOL = "{SYMBOL}";
constexpr std::string_view DTYPE_FIELD = "dtype";
constexpr std::string_view HEAD_SIZE_FIELD = "head_size";
constexpr std::string_view BLOCK_M_FIELD = "block_m";

std::optional<int64_t> integerMetadata(const KernelDefinition& kernel, std::string_view field)
{{
    const auto it = kernel.metadata.find(std::string(field));
    if(it == kernel.metadata.end())
    {{
        return std::nullopt;
    }}
    return std::get<int64_t>(it->second);
}}

bool kernelMatches(const KernelDefinition& kernel, const Problem& problem)
{{
    const auto intField
        = [&kernel](std::string_view field) {{ return kernel.getIntMetadata(std::string(field)); }};
    return kernel.getStringMetadata(std::string(DTYPE_FIELD)) == problem.dtype
           && intField(HEAD_SIZE_FIELD) == problem.headSize
           && integerMetadata(kernel, BLOCK_M_FIELD).has_value();
}}
}} // namespace
"""

"""The GPU architectures a compiler flag names, in every spelling the builds use, and
which flags change no code a module ships.

Maintainers: pure string functions. nvcc: `-gencode arch=compute_90a,code=sm_90a` (also
`-gencode=...`, `code=[sm_80,compute_80]`), `-arch=sm_90a`, `--gpu-architecture=sm_80`;
hipcc/clang: `--offload-arch=gfx942` (a `:xnack+` feature suffix dropped),
`--amdgpu-target=gfx90a`; CMake's `CUDA_ARCHITECTURES 90a` / `80-real` and
`TORCH_CUDA_ARCH_LIST` entries `8.0`, `9.0a`, `8.6+PTX`. An arch is named as the build
names its device code: `sm_90a`, `gfx942`. A PTX-only target (`code=compute_80`) embeds
no device code of its own: its flag counts (an edit of it changes what ships), its arch
does not. A target that depends on the machine (`native`) is no arch: callers record it
as unknown. The flags that change no generated code are the compiler's parallelism
(`--threads 4`, `--split-compile`), its diagnostics (`-W...`, `--resource-usage`,
`-lineinfo`, a verbose ptxas) and the fatbin's compression; any other flag may.
"""

from __future__ import annotations

import re

_GENCODE = re.compile(r"arch=(compute_\w+)\s*,\s*code=\[?([\w,]+)\]?")
_NVCC_ARCH = re.compile(r"(?:^|\s)(?:-arch|--gpu-architecture|-code)[= ](sm_\w+|compute_\w+)")
_OFFLOAD = re.compile(r"--(?:offload-arch|amdgpu-target|cuda-gpu-arch)=([\w:+-]+)")
_CMAKE_CUDA = re.compile(r"^(\d+)([a-z]?)(?:-(?:real|virtual))?$")
_TORCH_LIST = re.compile(r"^(\d+)\.(\d+)([a-z]?)(\+PTX)?$")
_GFX = re.compile(r"^gfx[0-9a-f]+$")
MACHINE = "native"
_NO_CODE = re.compile(
    r"\d+|--threads(?:[= ]\d+)?|-t ?\d*|--split-compile(?:[= ]\d+)?|-j ?\d*"
    r"|--resource-usage|-v|--verbose|-lineinfo|--display-error-number|--keep(?:-dir.*)?"
    r"|-W[\w=,+-]*|--diag[-_]suppress[= ][\w,]+|-Xfatbin|-compress-all|-?-compress-mode=\w+"
    r"|--ptxas-options=-?-v(?:erbose)?|-Xptxas[= ]-?-v(?:erbose)?"
    r"|-?-ftemplate-backtrace-limit=\d+")


def changes_code(flag: str) -> bool:
    """Whether a compile flag may change the code a module ships (see the module
    docstring for those that do not; a bare number is the value of such an option)."""
    return _NO_CODE.fullmatch(flag.strip()) is None


def flag_archs(text: str) -> tuple[set[str], set[str], set[str]]:
    """(the archs, the arch flags as spelled, the machine-dependent targets) one flag
    string names."""
    archs: set[str] = set()
    flags: set[str] = set()
    machine: set[str] = set()
    for match in _GENCODE.finditer(text):
        flags.add(match.group(0).replace(" ", ""))
        archs |= {code for code in match.group(2).split(",") if code.startswith("sm_")}
    for match in _NVCC_ARCH.finditer(text):
        flags.add(match.group(0).strip())
        if match.group(1).startswith("sm_"):
            archs.add(match.group(1))
    for match in _OFFLOAD.finditer(text):
        flags.add(match.group(0))
        target = match.group(1).split(":")[0]
        (machine if target == MACHINE else archs).add(target)
    return archs, flags, machine


def cmake_arch(value: str) -> str | None:
    """The arch one `CUDA_ARCHITECTURES` / `HIP_ARCHITECTURES` / `GPU_TARGETS` entry names
    (`90a` -> `sm_90a`, `80-real` -> `sm_80`, `gfx942` -> itself), or None (`native`, `all`,
    a PTX-only `-virtual` entry, anything else)."""
    text = value.strip()
    if _GFX.match(text.split(":")[0]):
        return text.split(":")[0]
    match = _CMAKE_CUDA.match(text)
    if match is None or text.endswith("-virtual"):
        return None
    return f"sm_{match.group(1)}{match.group(2)}"


def torch_arch(value: str) -> str | None:
    """The arch one `TORCH_CUDA_ARCH_LIST` / `PYTORCH_ROCM_ARCH` entry names (`9.0a` ->
    `sm_90a`, `8.6+PTX` -> `sm_86`, `gfx942` -> itself), or None."""
    text = value.strip()
    if _GFX.match(text.split(":")[0]):
        return text.split(":")[0]
    match = _TORCH_LIST.match(text)
    return f"sm_{match.group(1)}{match.group(2)}{match.group(3)}" if match else None

"""Liger-Kernel's fused linear cross entropy, forward + backward, timed with CUDA events:
one JSON line per reduction, {"label": "flce|BTxHxV|bf16|<reduction>", "us": median}.

Run from a Liger-Kernel tree (impact validate runs it from each side's folder, with that
side's liger_kernel first on the import path). The backward gets a non-uniform upstream
gradient for reduction="none", the case #1298 fixed."""

import json
import sys

import torch
from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss

BT, H, V = 8192, 4096, 32000
WARMUP, SAMPLES = 5, 20


def main() -> int:
    if not torch.cuda.is_available():
        print("bench_flce: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    x = torch.randn(BT, H, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(V, H, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    target = torch.randint(0, V, (BT,), device="cuda")
    for reduction in ("mean", "none"):
        loss_fn = LigerFusedLinearCrossEntropyLoss(reduction=reduction)
        upstream = torch.rand(BT, device="cuda", dtype=torch.float32) if reduction == "none" \
            else None

        def step(loss_fn=loss_fn, upstream=upstream) -> None:
            loss = loss_fn(w, x, target)
            loss.backward(upstream.to(loss.dtype) if upstream is not None else None)
            x.grad = w.grad = None

        for _ in range(WARMUP):
            step()
        times = []
        for _ in range(SAMPLES):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
        times.sort()
        print(json.dumps({"label": f"flce|{BT}x{H}x{V}|bf16|{reduction}",
                          "us": round(times[len(times) // 2], 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""close_check.py NATIVE OTHER: whether OTHER, lm_identical.py's output from a run whose GEMMs
summed in another order (GPUPRIO_GEMM_CTA_US raises the split of k), is close to NATIVE's: every
step's loss within 1% of the native one, no value that is not finite, and the weights' largest
difference small beside their spread. Prints the largest differences; exit 0 when close, 1 when
not. The bound is loose on purpose: it catches a wrong result (a slice or split computing the
wrong part of a product moves the loss by far more), not the rounding the mode is expected to
change.
"""
import os
import sys

import torch

STEPS = 20


def main():
    a = torch.from_file(sys.argv[1], size=_count(sys.argv[1]), dtype=torch.float32)
    b = torch.from_file(sys.argv[2], size=_count(sys.argv[2]), dtype=torch.float32)
    if a.numel() != b.numel() or a.numel() <= STEPS:
        print(f"sizes differ: {a.numel()} and {b.numel()} values")
        return 1
    if not torch.isfinite(b).all():
        print("values that are not finite")
        return 1
    loss_rel = ((a[:STEPS] - b[:STEPS]).abs() / a[:STEPS].abs()).max().item()
    w_a, w_b = a[STEPS:].double(), b[STEPS:].double()
    w_max = (w_a - w_b).abs().max().item()
    w_spread = w_a.std().item()
    differ = (w_a != w_b).double().mean().item()
    print(f"losses within {loss_rel:.2e} relative; weights: largest difference {w_max:.2e} "
          f"against a spread of {w_spread:.2e}, {differ:.1%} of them differ")
    return 0 if loss_rel <= 0.01 and w_max <= w_spread else 1


def _count(path):
    return os.path.getsize(path) // 4


if __name__ == "__main__":
    sys.exit(main())

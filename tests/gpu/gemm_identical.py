"""gemm_identical.py OUT: large linear layers with a bias (PyTorch issues them to
cublasLtMatmul with the BIAS or GELU_BIAS epilogue and an algorithm of its choice) in bf16, fp16
and fp32, 12 times each, writing every output's bytes' SHA-256 to OUT. tests/gpu/run.sh's gemm
check runs it without gpuprio and under it at low priority next to a bursting high-priority
process with GPUPRIO_GEMM_SLICE_US=1, where gpuprio cuts the calls into slices (issue 45): the
files must be identical, and the library must say it sliced.
"""
import hashlib
import sys

import torch

# (tokens, in features, out features): GPT-2 medium's MLP, a head over GPT-2's vocabulary (an
# odd leading dimension), BERT-large's attention output, and the head on 1024 tokens; each cut
# along the tokens (n) or the out features (m, the bias with them), whichever the plan finds
# ends soonest (with GPUPRIO_GEMM_SLICE_US=1 the heads along the vocabulary).
SHAPES = ((8192, 1024, 4096), (4096, 1024, 50257), (8192, 1024, 1024), (1024, 1024, 50257))


def digest(t):
    return hashlib.sha256(t.contiguous().view(torch.uint8).cpu().numpy().tobytes()).digest()


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    with open(sys.argv[1], "wb") as out:
        for dt in (torch.bfloat16, torch.float16, torch.float32):
            for tokens, fin, fout in SHAPES:
                x = torch.randn(tokens, fin, device="cuda", dtype=dt, generator=g)
                w = torch.randn(fout, fin, device="cuda", dtype=dt, generator=g) * 0.02
                b = torch.randn(fout, device="cuda", dtype=dt, generator=g)
                for rep in range(12):
                    out.write(digest(torch.nn.functional.linear(x, w, b)))
                    if dt != torch.float32:  # GELU_BIAS: PyTorch's fused addmm + gelu
                        out.write(digest(torch._addmm_activation(b, x, w.t(), use_gelu=True)))
        torch.cuda.synchronize()
    print("done")


if __name__ == "__main__":
    main()

"""gemmex_identical.py OUT: matrix products at PyTorch's default BLAS backend (no
TORCH_BLAS_PREFER_CUBLASLT), which sends bf16 and fp16 `mm` without a bias to cublasGemmEx: the
LM head of GPT-2 medium training over 8 x 512 tokens (logits (4096, 1024) x (1024, 50257), and
its two backward products, the input and the weight gradients), and a few MLP-sized products; and
batched products, which bmm and baddbmm send to cublasGemmStridedBatchedEx (64 items of
(512, 4096) x (4096, 512), 32 of (2048, 1024) x (1024, 2048) plain, with B transposed and through
baddbmm with alpha 1.5 and beta 0.5, and attention-shaped scores 128 x (1024, 64) x (64, 1024));
in bf16, fp16 and fp32 (fp32 reaches cublasSgemm and cublasSgemmStridedBatched, not cut: its
results must be identical all the same), 6 times each, writing every output's bytes' SHA-256 to
OUT. tests/gpu/run.sh's gemmex check runs it without gpuprio and under it at low priority next to
the bursting high-priority process with GPUPRIO_GEMM_SLICE_US=1, where gpuprio translates the
long calls into cuBLASLt slices (issue 45): the files must be identical, and the library must
say it sliced cublasGemmEx calls (and says how many cublasGemmStridedBatchedEx calls it sliced).
Under a minute on an H200.
"""
import hashlib
import sys

import torch

TOKENS, HIDDEN, VOCAB = 8 * 512, 1024, 50257
# (m, k, n) of a @ b with a (m, k), b (k, n): MLP-sized, then the head on fewer tokens.
OTHERS = ((8192, 1024, 4096), (8192, 4096, 1024), (1024, 1024, 50257))
# (items, m, k, n) of bmm(a, b) with a (items, m, k), b (items, k, n).
BATCHED = ((64, 512, 4096, 512), (32, 2048, 1024, 2048), (128, 1024, 64, 1024))
REPEATS = 6


def digest(t):
    return hashlib.sha256(t.contiguous().view(torch.uint8).cpu().numpy().tobytes()).digest()


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    with open(sys.argv[1], "wb") as out:
        for dt in (torch.bfloat16, torch.float16, torch.float32):
            x = torch.randn(TOKENS, HIDDEN, device="cuda", dtype=dt, generator=g)
            w = torch.randn(VOCAB, HIDDEN, device="cuda", dtype=dt, generator=g) * 0.02
            grad = torch.randn(TOKENS, VOCAB, device="cuda", dtype=dt, generator=g) * 0.01
            for _ in range(REPEATS):
                out.write(digest(torch.mm(x, w.t())))  # logits
                out.write(digest(torch.mm(grad, w)))  # input gradient
                out.write(digest(torch.mm(grad.t(), x)))  # weight gradient
            del x, w, grad
            for m, k, n in OTHERS:
                a = torch.randn(m, k, device="cuda", dtype=dt, generator=g)
                b = torch.randn(k, n, device="cuda", dtype=dt, generator=g) * 0.05
                for _ in range(REPEATS):
                    out.write(digest(torch.mm(a, b)))
                    out.write(digest(torch.matmul(a, b)))
            del a, b
            for items, m, k, n in BATCHED:
                a = torch.randn(items, m, k, device="cuda", dtype=dt, generator=g)
                b = torch.randn(items, k, n, device="cuda", dtype=dt, generator=g) * 0.05
                bt = b.transpose(1, 2).contiguous()
                c = torch.randn(items, m, n, device="cuda", dtype=dt, generator=g)
                for _ in range(REPEATS):
                    out.write(digest(torch.bmm(a, b)))
                    out.write(digest(torch.bmm(a, bt.transpose(1, 2))))  # op(B) transposed
                    out.write(digest(torch.baddbmm(c, a, b, beta=0.5, alpha=1.5)))
                del a, b, bt, c
        torch.cuda.synchronize()
    print("done")


if __name__ == "__main__":
    main()

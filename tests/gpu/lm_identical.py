"""lm_identical.py OUT: 20 training steps of a language model with GPT-2 medium's width and its
head over the 50,257-token vocabulary (4 layers instead of 24, to be quick; bf16, 8 sequences of
512 tokens, SGD), as the headline's LM load trains, at PyTorch's default BLAS backend; writes
every step's loss and the final weights, as raw bytes, to OUT. tests/gpu/run.sh's lm check runs
it without gpuprio and under it at low priority next to the bursting high-priority process with
GPUPRIO_GEMM_SLICE_US=1, where the head's long GEMMs are cut into slices (issue 45): the files
must be bit-identical, and the library must say it sliced cublasGemmEx calls. Attention is
PyTorch's eager form and algorithms are deterministic (CUBLAS_WORKSPACE_CONFIG), so that two
native runs agree bit for bit (run.sh runs it twice natively to know). About half a minute on
an H200.
"""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

STEPS = 20


def main():
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(0)
    config = GPT2Config(n_embd=1024, n_layer=4, n_head=16, vocab_size=50257, n_positions=1024)
    config._attn_implementation = "eager"
    model = GPT2LMHeadModel(config).cuda().to(torch.bfloat16).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [torch.randint(0, 50257, (8, 512), device="cuda", generator=g) for _ in range(4)]
    losses = []
    for i in range(STEPS):
        tokens = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        opt.step()
        losses.append(loss.detach().float())
    torch.cuda.synchronize()
    with open(sys.argv[1], "wb") as out:
        out.write(torch.stack(losses).cpu().numpy().tobytes())
        for p in model.parameters():
            out.write(p.detach().float().cpu().numpy().tobytes())
    print(f"final loss {losses[-1].item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

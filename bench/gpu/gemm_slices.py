"""gemm_slices.py - can a long GEMM be cut into slices of its output exactly, and at what cost
(issue 45)? On the GPU, for the three GEMMs of a language model's head (GPT-2 medium's shape:
8 x 512 tokens, hidden 1024, vocabulary 50,257, bf16): the forward logits, the input's gradient
and the weight's gradient, each as PyTorch issues it (column-major, as cuBLAS sees it).

    python3 gemm_slices.py trace        a GPT-2-medium training step and single matmuls, to be run
                                        with bench/gpu/blas_trace.so preloaded (which entry points)
    python3 gemm_slices.py slices       per GEMM: cublasGemmEx whole, then along m and along n in
                                        slices of several widths, each at the same leading
                                        dimensions: bitwise equal to the whole or not, and the
                                        time; the same through cublasLt with the whole problem's
                                        heuristic algorithm pinned on every slice
    python3 gemm_slices.py sweep        60 shapes, types and transposes: cublasGemmEx against
                                        cublasLt's top heuristic algorithm, and that algorithm on
                                        1024-wide slices against its whole, bitwise
Prints one line per measurement.
"""
import ctypes
import os
import sys

import torch

T, K, V = 8 * 512, 1024, 50257
BF16, R32F, COMPUTE_32F = 14, 0, 68
OP_N, OP_T = 0, 1


def trace():
    from transformers import GPT2Config, GPT2LMHeadModel

    mark = open(os.environ.get("BLAS_TRACE", "/dev/stderr"), "a")

    def tag(s):
        torch.cuda.synchronize()
        mark.write("== %s\n" % s)
        mark.flush()

    cfg = GPT2Config(n_embd=1024, n_layer=24, n_head=16, vocab_size=V, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().to(torch.bfloat16).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    ids = torch.randint(0, V, (8, 512), device="cuda")
    for i in range(2):
        tag("gpt2-medium training step %d" % i)
        opt.zero_grad(set_to_none=True)
        model(input_ids=ids, labels=ids).loss.backward()
        opt.step()
    for dt in (torch.bfloat16, torch.float16, torch.float32):
        a = torch.randn(512, 1024, device="cuda", dtype=dt)
        w = torch.randn(3000, 1024, device="cuda", dtype=dt)
        b = torch.randn(3000, device="cuda", dtype=dt)
        tag("%s mm" % dt)
        a @ w.t()
        tag("%s linear with bias" % dt)
        torch.nn.functional.linear(a, w, b)
        tag("%s bmm" % dt)
        torch.bmm(a.view(8, 64, 1024), w[:1024].view(8, 128, 1024).transpose(1, 2))
    tag("end")


def libs():
    paths = {}
    for line in open("/proc/self/maps"):
        p = line.split()[-1]
        for name in ("libcublasLt.so", "libcublas.so"):
            if "/" + name in p and name not in paths:
                paths[name] = p
    return ctypes.CDLL(paths["libcublas.so"]), ctypes.CDLL(paths["libcublasLt.so"])


def gemms():
    """(name, ta, tb, m, n, k, A, lda, B, ldb, ldc): the head's three GEMMs as cuBLAS sees them."""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(V, K, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
    go = torch.randn(T, V, device="cuda", dtype=torch.bfloat16, generator=g) * 1e-3
    return [("logits x@W^T", OP_T, OP_N, V, T, K, w, K, x, K, V, (x @ w.t())),
            ("dgrad go@W", OP_N, OP_N, K, T, V, w, K, go, V, K, (go @ w)),
            ("wgrad go^T@x", OP_N, OP_T, K, V, T, x, K, go, V, K, (go.t() @ x))]


def timed(fn, reps=5):
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]


def blas():
    """The ctypes helpers that slices() and sweep() share."""
    torch.ones(8, 8, device="cuda") @ torch.ones(8, 8, device="cuda")
    cublas, lt = libs()
    handle = ctypes.c_void_p(torch.cuda.current_blas_handle())
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    ws = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    lth = ctypes.c_void_p()
    assert lt.cublasLtCreate(ctypes.byref(lth)) == 0

    def gemm_ex(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, dt=BF16):
        r = cublas.cublasGemmEx(handle, ta, tb, m, n, k, ctypes.byref(one), ctypes.c_void_p(a), dt,
                                lda, ctypes.c_void_p(b), dt, ldb, ctypes.byref(zero),
                                ctypes.c_void_p(c), dt, ldc, COMPUTE_32F, -1)
        assert r == 0, "cublasGemmEx: status %d" % r

    def layout(rows, cols, ld, dt=BF16):
        l = ctypes.c_void_p()
        assert lt.cublasLtMatrixLayoutCreate(ctypes.byref(l), dt, ctypes.c_uint64(rows),
                                             ctypes.c_uint64(cols), ctypes.c_int64(ld)) == 0
        return l

    def lt_desc(ta, tb):
        d = ctypes.c_void_p()
        assert lt.cublasLtMatmulDescCreate(ctypes.byref(d), COMPUTE_32F, R32F) == 0
        for attr, v in ((3, ta), (4, tb)):
            v = ctypes.c_int32(v)
            assert lt.cublasLtMatmulDescSetAttribute(d, attr, ctypes.byref(v), 4) == 0
        return d

    def lt_layouts(ta, tb, m, n, k, lda, ldb, ldc, dt=BF16):
        al = layout(m, k, lda, dt) if ta == OP_N else layout(k, m, lda, dt)
        bl = layout(k, n, ldb, dt) if tb == OP_N else layout(n, k, ldb, dt)
        return al, bl, layout(m, n, ldc, dt)

    def heuristic(desc, al, bl, cl):
        pref = ctypes.c_void_p()
        assert lt.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)) == 0
        size = ctypes.c_uint64(ws.numel())
        assert lt.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(size), 8) == 0
        res = (ctypes.c_uint8 * 96)()
        found = ctypes.c_int()
        r = lt.cublasLtMatmulAlgoGetHeuristic(lth, desc, al, bl, cl, cl, pref, 1, res,
                                              ctypes.byref(found))
        assert r == 0 and found.value == 1, "heuristic: status %d, %d found" % (r, found.value)
        algo = (ctypes.c_uint8 * 64).from_buffer_copy(bytes(res)[:64])
        cfg = {}
        for name, attr in (("id", 0), ("tile", 1), ("splitk", 2), ("reduction", 3), ("stages", 6)):
            v, w = ctypes.c_int32(-1), ctypes.c_size_t()
            lt.cublasLtMatmulAlgoConfigGetAttribute(algo, attr, ctypes.byref(v), 4, ctypes.byref(w))
            cfg[name] = v.value
        return algo, cfg

    def lt_matmul(desc, algo, a, al, b, bl, c, cl):
        r = lt.cublasLtMatmul(lth, desc, ctypes.byref(one), ctypes.c_void_p(a), al,
                              ctypes.c_void_p(b), bl, ctypes.byref(zero), ctypes.c_void_p(c), cl,
                              ctypes.c_void_p(c), cl, algo, ctypes.c_void_p(ws.data_ptr()),
                              ctypes.c_size_t(ws.numel()), stream)
        return r

    return gemm_ex, lt_desc, lt_layouts, heuristic, lt_matmul


def slices():
    gemm_ex, lt_desc, lt_layouts, heuristic, lt_matmul = blas()

    def kernels(fn):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        return sorted({e.key[:90] for e in p.key_averages() if e.device_type.name == "CUDA"})

    for name, ta, tb, m, n, k, A, lda, B, ldb, ldc, ref in gemms():
        es = 2
        c0 = torch.zeros(n, ldc, device="cuda", dtype=torch.bfloat16)
        a, b = A.data_ptr(), B.data_ptr()
        whole = lambda: gemm_ex(ta, tb, m, n, k, a, lda, b, ldb, c0.data_ptr(), ldc)
        whole()
        torch.cuda.synchronize()
        ok_ref = torch.equal(c0, ref)
        t_whole = timed(whole)
        print("%-14s m=%d n=%d k=%d whole cublasGemmEx %.3f ms; equal to torch's own: %s; kernels %s"
              % (name, m, n, k, t_whole, ok_ref, kernels(whole)), flush=True)
        for dim in ("m", "n"):
            extent = m if dim == "m" else n
            for width in (256, 1024, 4096, 8192, 16384):
                if width >= extent:
                    continue
                c1 = torch.zeros_like(c0)

                def sliced():
                    for j in range(0, extent, width):
                        w_ = min(width, extent - j)
                        if dim == "m":
                            ao = a + es * (j if ta == OP_N else j * lda)
                            gemm_ex(ta, tb, w_, n, k, ao, lda, b, ldb, c1.data_ptr() + es * j, ldc)
                        else:
                            bo = b + es * (j * ldb if tb == OP_N else j)
                            gemm_ex(ta, tb, m, w_, k, a, lda, bo, ldb, c1.data_ptr() + es * j * ldc, ldc)
                sliced()
                torch.cuda.synchronize()
                same = torch.equal(c0, c1)
                diff = (c0.float() - c1.float()).abs().max().item()
                t = timed(sliced)
                slices_ = -(-extent // width)
                print("  GemmEx along %s, %5d wide (%3d slices): bitwise %s (max diff %.3g), %.3f ms "
                      "(%.2fx whole, %.3f ms a slice); kernels %s"
                      % (dim, width, slices_, "EQUAL" if same else "DIFFERENT", diff, t, t / t_whole,
                         t / slices_, kernels(sliced)), flush=True)
        # cublasLt, the whole problem's heuristic algorithm pinned on every slice.
        desc = lt_desc(ta, tb)
        al, bl, cl = lt_layouts(ta, tb, m, n, k, lda, ldb, ldc)
        algo, cfg = heuristic(desc, al, bl, cl)
        c2 = torch.zeros_like(c0)
        lt_whole = lambda: lt_matmul(desc, algo, a, al, b, bl, c2.data_ptr(), cl)
        r = lt_whole()
        torch.cuda.synchronize()
        t_lt = timed(lt_whole)
        print("  cublasLt whole: status %d, algo %s, %.3f ms, equal to GemmEx's: %s; kernels %s"
              % (r, cfg, t_lt, torch.equal(c0, c2), kernels(lt_whole)), flush=True)
        for dim in ("m", "n"):
            extent = m if dim == "m" else n
            for width in (1024, 4096, 8192):
                if width >= extent:
                    continue
                c3 = torch.zeros_like(c0)
                status = []

                def lt_sliced():
                    for j in range(0, extent, width):
                        w_ = min(width, extent - j)
                        if dim == "m":
                            ao = a + es * (j if ta == OP_N else j * lda)
                            sal, sbl, scl = lt_layouts(ta, tb, w_, n, k, lda, ldb, ldc)
                            status.append(lt_matmul(desc, algo, ao, sal, b, sbl, c3.data_ptr() + es * j, scl))
                        else:
                            bo = b + es * (j * ldb if tb == OP_N else j)
                            sal, sbl, scl = lt_layouts(ta, tb, m, w_, k, lda, ldb, ldc)
                            status.append(lt_matmul(desc, algo, a, sal, bo, sbl, c3.data_ptr() + es * j * ldc, scl))
                lt_sliced()
                torch.cuda.synchronize()
                t = timed(lt_sliced)
                print("  cublasLt along %s, %5d wide, whole's algo: statuses %s, bitwise %s, %.3f ms (%.2fx)"
                      % (dim, width, sorted(set(status)), "EQUAL" if torch.equal(c2, c3) else "DIFFERENT",
                         t, t / t_lt), flush=True)


def sweep():
    """cublasGemmEx whole against cublasLt's top heuristic algorithm whole, and that algorithm on
    slices of 1024 along n and m, over shapes, types and transposes: bitwise, counted."""
    gemm_ex, lt_desc, lt_layouts, heuristic, lt_matmul = blas()
    g = torch.Generator(device="cuda").manual_seed(1)
    types = ((BF16, torch.bfloat16), (2, torch.float16), (R32F, torch.float32))
    dims = (512, 1000, 1024, 3000, 4096, 8192, 50257)
    tally = {}
    for case in range(60):
        dt, tdt = types[case % 3]
        m, n, k = (dims[int(i)] for i in torch.randint(0, len(dims), (3,), generator=g, device="cuda"))
        if m * n * k > 2 ** 38:
            k = max(512, 2 ** 38 // (m * n))
        ta, tb = case // 3 % 2, case // 6 % 2
        lda = m if ta == OP_N else k
        ldb = k if tb == OP_N else n
        A = torch.randn(k if ta == OP_N else m, lda, device="cuda", dtype=tdt, generator=g)
        B = torch.randn(n if tb == OP_N else k, ldb, device="cuda", dtype=tdt, generator=g)
        c0, c1, c2 = (torch.zeros(n, m, device="cuda", dtype=tdt) for _ in range(3))
        gemm_ex(ta, tb, m, n, k, A.data_ptr(), lda, B.data_ptr(), ldb, c0.data_ptr(), m, dt)
        desc = lt_desc(ta, tb)
        al, bl, cl = lt_layouts(ta, tb, m, n, k, lda, ldb, m, dt)
        algo, cfg = heuristic(desc, al, bl, cl)
        r = lt_matmul(desc, algo, A.data_ptr(), al, B.data_ptr(), bl, c1.data_ptr(), cl)
        es = A.element_size()
        rs = []
        for j in range(0, n, 1024):
            w = min(1024, n - j)
            sal, sbl, scl = lt_layouts(ta, tb, m, w, k, lda, ldb, m, dt)
            bo = B.data_ptr() + es * (j * ldb if tb == OP_N else j)
            rs.append(lt_matmul(desc, algo, A.data_ptr(), sal, bo, sbl, c2.data_ptr() + es * j * m, scl))
        torch.cuda.synchronize()
        same_lt = torch.equal(c0, c1)
        same_slices = torch.equal(c1, c2)
        key = (same_lt, same_slices, r == 0 and set(rs) == {0})
        tally[key] = tally.get(key, 0) + 1
        print("%-9s ta=%d tb=%d m=%5d n=%5d k=%5d algo=%s: GemmEx==Lt top-1 %s, Lt slices along n "
              "==Lt whole %s, statuses %s/%s" % (tdt, ta, tb, m, n, k, cfg, same_lt, same_slices, r,
                                                 sorted(set(rs))), flush=True)
    print("tally (GemmEx==Lt, slices==whole, all succeeded): count")
    for k_, v in sorted(tally.items()):
        print("  %s: %d" % (k_, v))


if __name__ == "__main__":
    {"trace": trace, "slices": slices, "sweep": sweep}[sys.argv[1]]()

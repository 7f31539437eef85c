#!/bin/sh
# realblas.sh SHIM MAIN USER_LIBRARY REAL_CUBLAS - the shim's cuBLAS exports in front of the real
# cuBLAS 13 (libcublas.so.13 and libcublasLt.so.13 of a CUDA toolkit, found at configure time),
# called from a library loaded RTLD_LOCAL as PyTorch's is, through versioned references:
#   - every call returns what it returns without the shim, with slicing off and on;
#   - the calls bind to the shim (its unversioned exports take versioned references), and the
#     shim forwards each to the real library that the caller links (the loader's bindings,
#     LD_DEBUG=bindings), never to nothing: no "no cuBLAS" warning.
set -u
shim=$1 main=$2 user=$3 real=$4
. "$(dirname "$0")/../../tools/expect.sh"
sandbox realblas
trap 'sandbox_cleanup' EXIT

"$main" "$user" >"$tmp/native.txt" 2>&1
expect "the native run's exit status" 0 $?
for us in 0 500; do
    GPUPRIO_GEMM_SLICE_US=$us LD_DEBUG=bindings LD_DEBUG_OUTPUT=$tmp/bind.$us \
        LD_PRELOAD=$shim "$main" "$user" >"$tmp/shim.$us.txt" 2>"$tmp/err.$us"
    expect "GPUPRIO_GEMM_SLICE_US=$us: the exit status" 0 $?
    expect "GPUPRIO_GEMM_SLICE_US=$us: every status as without the shim" "" \
        "$(diff "$tmp/native.txt" "$tmp/shim.$us.txt")"
    expect "GPUPRIO_GEMM_SLICE_US=$us: no warning" "" "$(grep -i 'no cublas' "$tmp/err.$us")"
    for fn in cublasSetStream_v2 cublasSetWorkspace_v2 cublasGemmEx cublasGemmStridedBatchedEx \
        cublasLtMatmul cublasDestroy_v2; do
        to_shim=$(cat "$tmp"/bind.$us.* | grep -c "binding file $user .* to $shim .*\`$fn'")
        case $fn in cublasLt*) lib=libcublasLt.so.13 ;; *) lib=libcublas.so.13 ;; esac
        to_real=$(cat "$tmp"/bind.$us.* | grep -c "binding file $user .* to $real/$lib .*\`$fn'")
        expect "GPUPRIO_GEMM_SLICE_US=$us: $fn bound to the shim" yes \
            "$([ "$to_shim" -ge 1 ] && echo yes || echo no)"
        expect "GPUPRIO_GEMM_SLICE_US=$us: $fn forwarded to $lib" yes \
            "$([ "$to_real" -ge 1 ] && echo yes || echo no)"
    done
done
cat "$tmp/native.txt"
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"

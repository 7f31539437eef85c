#!/bin/sh
# callers.sh SHIM CALLERS USER12 USER13 STATIC: each caller's cublasLtMatmul reaches, under
# gpuprio (slicing off, its default), the cuBLASLt it reaches without it: two libraries loaded
# RTLD_LOCAL that link libcublasLt.so.12 and .so.13 (stand-ins that return 12 and 13), in both
# orders; a library with a cuBLASLt of its own inside (returns 42); and calls made after a call
# that came before any cuBLASLt was loaded (which gpuprio answers CUBLAS_STATUS_NOT_INITIALIZED,
# 1, with one warning). Fails naming the case whose output differs.
set -u
shim=$1 callers=$2 u12=$3 u13=$4 static=$5
status=0
check() { # NAME ARGS...: the same lines without gpuprio and under it
    name=$1
    shift
    native=$("$callers" "$@" 2>&1)
    under=$(LD_PRELOAD="$shim" GPUPRIO_LOG=warn "$callers" "$@" 2>/dev/null)
    if [ "$native" = "$under" ]; then
        echo "ok: $name: $(echo "$under" | tr '\n' ' ')"
    else
        echo "FAIL: $name: without gpuprio: $(echo "$native" | tr '\n' ' '); under it: $(echo "$under" | tr '\n' ' ')"
        status=1
    fi
}
check "12 then 13" "$u12" "$u13"
check "13 then 12" "$u13" "$u12"
check "a copy of its own, then 13" "$static" "$u13"
# Before any cuBLASLt: the probe reaches gpuprio's export alone (without gpuprio there is none),
# which answers 1 with one warning; the libraries loaded after it still reach their own.
under=$(LD_PRELOAD="$shim" "$callers" --probe-first "$u13" "$u12" 2>&1)
warned=$(echo "$under" | grep -c "no cuBLASLt is loaded")
lines=$(echo "$under" | grep -v "no cuBLASLt is loaded" | tr '\n' ' ')
want="probe: 1 $(basename "$u13"): 13 $(basename "$u12"): 12 "
if [ "$lines" = "$want" ] && [ "$warned" = 1 ]; then
    echo "ok: a call before any cuBLASLt was loaded, then the libraries: $lines"
else
    echo "FAIL: a call before any cuBLASLt was loaded, then the libraries: want '$want' and one warning, got: $under"
    status=1
fi
exit $status

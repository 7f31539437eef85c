#!/bin/sh
# levers.sh - runs one mode of levers (levers.c) under the shim with its environment, and checks
# what it says on stderr: nothing, or, for a reservation that cannot be made, one warning naming
# GPUPRIO_CU_RESERVE and what is accepted.
#
#   levers.sh LEVERS SHIM MODE [MASK] [-- VAR=VALUE...]
set -u
levers=$1 shim=$2 mode=$3
shift 3
mask=
if [ "$#" -gt 0 ] && [ "$1" != -- ]; then
    mask=$1
    shift
fi
[ "$#" -gt 0 ] && shift # --
err=$(mktemp)
trap 'rm -f "$err"' EXIT
env "$@" LD_PRELOAD="$shim" "$levers" "$mode" $mask 2>"$err"
status=$?
warnings=$(grep -c 'GPUPRIO_CU_RESERVE' "$err")
case $mode in
unreserved)
    if [ "$warnings" != 1 ] || ! grep -q 'accepted: ' "$err"; then
        echo "FAIL: expected one warning about GPUPRIO_CU_RESERVE saying what is accepted; stderr:"
        cat "$err"
        status=1
    fi
    ;;
*)
    if [ -s "$err" ]; then
        echo "FAIL: expected nothing on stderr; got:"
        cat "$err"
        status=1
    fi
    ;;
esac
exit "$status"

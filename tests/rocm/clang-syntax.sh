#!/bin/sh
# clang-syntax.sh - the tree against other HIP headers with this machine's clang, without
# installing clang where those headers are (part of the real-runtime stage, scripts/test-rocm.sh):
# configures a build tree in WORK with CC=clang against INCLUDE_DIR (a directory holding only
# hip/, e.g. a link to a root's usr/include/hip: the root's own libc headers must not come first),
# then runs every compile command of compile_commands.json with -fsyntax-only, two at a time.
# The flags are the build's own (-Werror included). tests/layers/upward.c is left out: it must
# fail to compile (layers.upward_include). Prints one line per failing file with its errors, and
# "ok: ..." or "FAIL: ..." at the end; exits 1 on any error.
#
#   clang-syntax.sh SRC INCLUDE_DIR WORK [JOBS]
set -eu
src=$1 inc=$2 work=$3 jobs=${4:-2}
cc=${CC:-clang}
rm -rf "$work"
mkdir -p "$work"
if ! CC=$cc cmake -S "$src" -B "$work/build" -DGPUPRIO_HIP_INCLUDE_DIR="$inc" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >"$work/configure.log" 2>&1; then
    tail -n 20 "$work/configure.log"
    echo "FAIL: configure with $cc against $inc"
    exit 1
fi
version=$($cc -dumpversion)
headers=$(sed -n 's/^-- HIP headers: [^,]*, HIP \([0-9.]*\).*/\1/p' "$work/configure.log")
# One shell command a line: cd to the entry's directory, its command with -fsyntax-only.
python3 - "$work/build/compile_commands.json" >"$work/commands" <<'PY'
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if e["file"].endswith("/tests/layers/upward.c"):
        continue
    cmd = e["command"] if "command" in e else shlex.join(e["arguments"])
    print("cd %s && %s -fsyntax-only 2>&1 || echo 'FAILED: %s'"
          % (shlex.quote(e["directory"]), cmd, e["file"].replace("'", "")))
PY
n=$(wc -l <"$work/commands")
tr '\n' '\0' <"$work/commands" | xargs -0 -n 1 -P "$jobs" sh -c >"$work/errors" 2>&1 || true
if [ -s "$work/errors" ]; then
    head -n 60 "$work/errors"
    echo "FAIL: $(grep -c '^FAILED: ' "$work/errors") of $n files with clang $version -Werror" \
        "against the HIP $headers headers"
    exit 1
fi
echo "ok: $n files with clang $version -Werror (syntax only) against the HIP $headers headers"

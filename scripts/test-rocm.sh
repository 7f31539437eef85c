#!/bin/sh
# test-rocm.sh: the real-runtime stage (docs/testing-stages.md). gpuprio is built and tested on Debian 12
# against ROCm 5.2.3; its users run ROCm 6.4 and 7.x. Debian's archive carries those runtimes:
# sid has HIP 6.4.3, experimental HIP 7.2.4. This makes a root of each with mmdebstrap, from the
# archive apt on this machine is configured with, and in each (tests/rocm/in-root.sh):
#   - builds gpuprio with gcc -Werror against that root's HIP headers and runs ctest there, the
#     real-runtime test against its libamdhip64.so.6 or .so.7 included;
#   - preloads HOST_SHIM, the library built here on Debian 12 (the .deb's), into programs linked
#     against the real runtime, directly and bundled like a ROCm wheel's: output, exit status and
#     bindings as without it, in every exit path;
# and, outside the roots, runs tests/check-exports.sh against each real runtime (every symbol it
# exports is in versions/hip-version-nodes.tsv, in the version node the table gives) and checks
# the tree's syntax with this machine's clang -Werror against each root's HIP headers
# (tests/rocm/clang-syntax.sh: the roots have gcc only, and clang there would cost the download).
#
#   sh scripts/test-rocm.sh [PACKAGE.deb | LIBRARY.so]
#
# HOST_SHIM is the package's libgpuprio-hip.so: that of PACKAGE.deb, or of the package
# scripts/package.sh makes first (in $GPUPRIO_PACKAGE_BUILD_DIR, default build-test/rocm/package),
# or LIBRARY.so where one is given instead. Needs root (mmdebstrap, chroot, mounts) and
# mmdebstrap. The roots are kept in build-test/rocm/ and reused for a week when made with the
# same options; a root is never modified beyond its /src, /build and /tmp, and apt's lists
# (in-root.sh downloads hipBLASLt's headers). Mounts (/proc, /dev) are made in a mount namespace
# of their own (unshare), so they vanish with it, whatever happens. Exits non-zero if anything
# fails, and when the archive cannot be reached, which it says in one line: CI must not pass
# without this stage.
#
# Environment: GPUPRIO_ROCM_MIRROR (the archive's URI; default: the first of apt's sources that is
# not a security archive), GPUPRIO_ROCM_ROOTS (default build-test/rocm), JOBS (default: nproc).
set -eu
cd "$(dirname "$0")/.."
src=$(pwd -P)
start=$(date +%s)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
work=${GPUPRIO_ROCM_ROOTS:-build-test/rocm}
say() { echo "test-rocm: $*"; }
die() {
    say "$*" >&2
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot and mounts); run it as root"
for tool in mmdebstrap unshare chroot readelf clang python3; do
    command -v $tool >/dev/null 2>&1 || die "$tool not found (scripts/install-deps.sh installs it)"
done

# The archive: apt's own configuration names it (deb822 .sources or one-line sources.list).
mirror_from_apt() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'function flush() { if (deb && uri != "" && suites !~ /-security/) { print uri; found = 1; exit }
                              deb = 0; uri = ""; suites = "" }
             /^[ \t]*$/ { flush(); next }
             tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
             tolower($1) == "uris:" { uri = $2 }
             tolower($1) == "suites:" { suites = $0 }
             END { if (!found) flush() }' "$f"
    done
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
                           if ($(i + 1) !~ /-security/) print $i }'
}
mirror=${GPUPRIO_ROCM_MIRROR:-$(mirror_from_apt | head -n 1)}
mirror=${mirror%/}
[ -n "$mirror" ] || die "no Debian archive in apt's sources (set GPUPRIO_ROCM_MIRROR)"

# One line, and failure, where the archive cannot be reached or lacks a suite.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for suite in sid experimental; do
    /usr/lib/apt/apt-helper -o Acquire::Retries=0 download-file "$mirror/dists/$suite/Release" \
        "$tmp/Release" >"$tmp/helper.log" 2>&1 ||
        die "FAIL: the Debian archive $mirror cannot be reached or has no $suite:" \
            "$(awk '/^Err/ { getline; sub(/^ +/, ""); print; exit }' "$tmp/helper.log")"
done

# The host library: the Debian package's (the one given, or made here by scripts/package.sh),
# or a library file given instead.
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
given=${1:-}
case $given in
*.so) shim=$given ;;
*)
    deb=$given
    if [ -z "$deb" ]; then
        say "making the Debian package (scripts/package.sh)"
        GPUPRIO_PACKAGE_BUILD_DIR=${GPUPRIO_PACKAGE_BUILD_DIR:-$work/package} \
            sh scripts/package.sh "$tmp/deb" >"$tmp/package.log" 2>&1 ||
            { tail -n 20 "$tmp/package.log"; die "FAIL: scripts/package.sh"; }
        deb=$(tail -n 1 "$tmp/package.log")
    fi
    dpkg-deb -x "$deb" "$tmp/package" || die "FAIL: cannot unpack $deb"
    shim=$(find "$tmp/package" -name libgpuprio-hip.so | head -n 1)
    [ -n "$shim" ] || die "FAIL: no libgpuprio-hip.so in $deb"
    say "the library of $(basename "$deb")"
    ;;
esac
[ -f "$shim" ] || die "no library $shim"

common=cmake,gcc,g++,libc6-dev,make,binutils,python3,python3-prometheus-client,pkg-config,patchelf
rocm7="libamdhip64-dev libamdhip64-7 libamd-comgr3 libamd-comgr-dev libhsa-runtime64-1
       libhsa-runtime-dev libhiprtc7 libhiprtc-builtins7"

# make_root NAME SUITES INCLUDE: build-test/rocm/NAME, made by mmdebstrap (or the week-old one
# made with the same arguments).
make_root() {
    rname=$1 root=$work/$1 suites=$2 include=$3
    sources=""
    for s in $suites; do sources="$sources|deb $mirror $s main"; done
    key="mmdebstrap --variant=apt --include=$include sid${sources}"
    if [ -f "$root.ok" ] && [ "$(cat "$root.ok")" = "$key" ] &&
        [ -z "$(find "$root.ok" -mtime +6)" ]; then
        say "$rname: reusing the root made $(date -r "$root.ok" '+%F %R')"
        return 0
    fi
    # A root left mounted would take /dev or /proc with it: never remove one that is.
    if grep -q " $root/" /proc/mounts; then
        die "FAIL: something is mounted under $root; unmount it first"
    fi
    rm -rf "$root" "$root.ok"
    say "$rname: making the root ($suites)"
    old_ifs=$IFS
    IFS='|'
    # shellcheck disable=SC2086 # the sources, one argument each
    set -- ${sources#|}
    IFS=$old_ifs
    if ! mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
        --include="$include" sid "$root" "$@" >"$root.log" 2>&1; then
        grep -E '^E:' "$root.log" | head -n 5
        die "FAIL: mmdebstrap could not make the $rname root from $mirror (log: $root.log)"
    fi
    echo "$key" >"$root.ok"
}

# in_root ROOT COMMAND...: COMMAND chrooted into ROOT, with /proc, /dev and a fresh /dev/shm
# mounted in a mount and PID namespace of its own: the mounts and any process left behind end with
# the command, however it ends.
in_root() {
    r=$1
    shift
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount --pid --fork --propagation private sh -c '
        r=$1
        shift
        mount --rbind /dev "$r/dev" && mount -t tmpfs -o mode=1777 shm "$r/dev/shm" &&
            mount -t proc proc "$r/proc" || exit 1
        exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
    ' sh "$r" "$@"
}

status=0
# test_root NAME SONAME
test_root() {
    name=$1 soname=$2 t0=$(date +%s)
    root=$work/$name
    lib=$root/usr/lib/$(gcc -print-multiarch)/$soname
    [ -f "$lib" ] || die "FAIL: the $name root has no $soname"
    # The tree as it is, built elsewhere than its build directories.
    rm -rf "$root/src" "$root/build" "$root/tmp"/*
    mkdir -p "$root/src/gpuprio" "$root/src/host"
    tar -C "$src" --exclude='./build*' --exclude=./.git --exclude=./out --exclude=__pycache__ \
        -cf - . | tar -C "$root/src/gpuprio" -xf -
    cp "$shim" "$root/src/host/libgpuprio-hip.so"
    say "==== $name: $soname ($(readlink -f "$lib" | sed 's/.*\.so\.//'))"
    in_root "$root" sh /src/gpuprio/tests/rocm/in-root.sh /src/gpuprio \
        /src/host/libgpuprio-hip.so /build "$jobs" || status=1
    say "$name: $(($(date +%s) - t0))s in the root"
    if sh tests/check-exports.sh "$lib" versions/hip-version-nodes.tsv >"$tmp/exports" 2>&1; then
        echo "ok: check-exports on the real $soname: $(tail -n 1 "$tmp/exports")"
    else
        cat "$tmp/exports"
        echo "FAIL: check-exports on the real $soname"
        status=1
    fi
    # The root's hip/ alone: its usr/include would put its libc headers ahead of this machine's.
    t0=$(date +%s)
    mkdir -p "$tmp/include-$name"
    ln -s "$root/usr/include/hip" "$tmp/include-$name/hip"
    sh tests/rocm/clang-syntax.sh "$src" "$tmp/include-$name" "$tmp/clang-$name" "$jobs" ||
        status=1
    say "$name: clang syntax check in $(($(date +%s) - t0))s"
}
# Both roots at once: making one is mostly waiting on the archive and on dpkg.
t0=$(date +%s)
make_root hip-6.4 "sid" "$common,libamdhip64-dev" &
pid64=$!
# shellcheck disable=SC2086 # one package a word
make_root hip-7.2 "sid experimental" "$common,$(printf '%s/experimental,' $rocm7 | sed 's/,$//')" &
pid72=$!
made=0
wait $pid64 || made=1
wait $pid72 || made=1
[ $made = 0 ] || die "FAIL: the roots could not be made"
say "roots ready in $(($(date +%s) - t0))s"
test_root hip-6.4 libamdhip64.so.6
test_root hip-7.2 libamdhip64.so.7

elapsed=$(($(date +%s) - start))
if [ $status = 0 ]; then
    say "passed against HIP 6.4 and 7.2 in ${elapsed}s"
else
    say "FAILED (${elapsed}s)"
fi
exit $status

#!/bin/sh
# package.sh: builds the Debian package of gpuprio (docs/packaging.md) and checks it with lintian.
#
#   sh scripts/package.sh [OUTDIR [CMAKE-ARGS...]]
#
# Configures a build tree of its own (build-package/, or $GPUPRIO_PACKAGE_BUILD_DIR) for the
# prefix the package installs to, /usr, so that the libraries go to lib/<multiarch> and the
# command looks for them there; builds only what is installed (-DGPUPRIO_TESTS=OFF); runs
# `cpack -G DEB`; runs lintian where it is installed, failing on any error or warning (the few
# overrides, each with its reason, are in packaging/lintian-overrides); copies the .deb to OUTDIR
# (default: the build tree) and prints its path as the last line. CMAKE-ARGS go to the configure
# step (-DGPUPRIO_HIP=OFF packages the CUDA library alone). The build tree is reused when it
# exists, so a second run only rebuilds what changed.
#
# Environment: CMAKE (default cmake; cpack is taken from the same directory),
# CMAKE_BUILD_PARALLEL_LEVEL (build jobs; default: every CPU), SOURCE_DATE_EPOCH (the date in the
# package's changelog; default: the last commit's, where this is a git checkout).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd -P)
build=${GPUPRIO_PACKAGE_BUILD_DIR:-$src/build-package}
out=${1:-$build}
[ $# -gt 0 ] && shift

cmake=${CMAKE:-cmake}
command -v "$cmake" >/dev/null 2>&1 || { echo "package.sh: $cmake not found" >&2; exit 1; }
cpack=$(dirname "$(command -v "$cmake")")/cpack
[ -x "$cpack" ] || cpack=cpack
# CPack fills Depends with dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS), from dpkg-dev.
if ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
    echo "package.sh: dpkg-shlibdeps not found: install dpkg-dev (scripts/install-deps.sh does)" >&2
    exit 1
fi

if [ -z "${SOURCE_DATE_EPOCH:-}" ] && command -v git >/dev/null 2>&1 &&
    t=$(git -C "$src" log -1 --format=%ct 2>/dev/null) && [ -n "$t" ]; then
    SOURCE_DATE_EPOCH=$t
    export SOURCE_DATE_EPOCH
fi

# Debian's hardening flags (stack protector, fortified functions, read-only relocations, binding
# at load time), as a Debian build would take them from dpkg-buildflags (dpkg-dev, needed above).
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)

mkdir -p "$build"
"$cmake" -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
    -DGPUPRIO_TESTS=OFF -DGPUPRIO_SANITIZE= "-DCMAKE_C_FLAGS=$cflags" \
    "-DCMAKE_SHARED_LINKER_FLAGS=$ldflags" "-DCMAKE_EXE_LINKER_FLAGS=$ldflags" \
    "-DCMAKE_MODULE_LINKER_FLAGS=$ldflags" \
    "$@" >"$build/package-configure.log" 2>&1 || {
    cat "$build/package-configure.log" >&2
    echo "package.sh: configuring $build failed" >&2
    exit 1
}
"$cmake" --build "$build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"

# CPack's staging tree and output go to a directory of their own, emptied first, so that the one
# .deb found there is the one just made.
stage=$build/_deb
rm -rf "$stage"
(cd "$build" && "$cpack" -G DEB -B "$stage")
set -- "$stage"/*.deb
[ $# = 1 ] && [ -f "$1" ] || { echo "package.sh: cpack made no single .deb in $stage" >&2; exit 1; }
deb=$1

if command -v lintian >/dev/null 2>&1; then
    echo "lintian $(basename "$deb"):"
    rc=0
    lintian --fail-on error,warning "$deb" >"$stage/lintian.log" 2>&1 || rc=$?
    # Lintian warns when run as root, which it is in CI: that is no finding about the package.
    grep -v '^running with root privileges' "$stage/lintian.log" || true
    [ $rc = 0 ] || { echo "package.sh: lintian found errors or warnings ($rc)" >&2; exit 1; }
    echo "lintian: no errors or warnings"
else
    echo "package.sh: lintian is not installed; the package was not checked" >&2
fi

mkdir -p "$out"
out=$(cd "$out" && pwd -P)
if [ "$out" != "$stage" ]; then
    cp "$deb" "$out/"
fi
echo "$out/$(basename "$deb")"

#!/bin/sh
# install.sh - cmake --install into a temporary prefix, then use what was installed: the man
# page is there and man renders it, the installed gpuprio preloads the installed library (also
# after the whole tree is moved), pkg-config finds gpuprio.pc, and a small CMake project finds the
# package (find_package), builds against gpuprio::headers and gpuprio::hip, and runs.
#
#   install.sh CMAKE BUILD_DIR LIBDIR CC SANITIZE_FLAGS TOOLS_CHILD
#
# LIBDIR is CMAKE_INSTALL_LIBDIR. SANITIZE_FLAGS ("-" for none) are the sanitizer flags of the
# build: the consumer project is built with them, since it links the instrumented library, and
# in such builds the installed gpuprio runs TOOLS_CHILD (an instrumented program) instead of sh,
# as an instrumented library cannot be preloaded into an uninstrumented program.
set -u
cmake=$1 build=$2 libdir=$3 cc=$4 san=$5 child=$6
[ "$san" = - ] && san=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
prefix=$tmp/prefix

. "$(dirname "$0")/expect.sh"

if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    echo "FAIL: cmake --install:"
    cat "$tmp/install.log"
    exit 1
fi
for f in bin/gpuprio "$libdir/libgpuprio-hip.so" include/gpuprio.h "$libdir/pkgconfig/gpuprio.pc" \
    "$libdir/cmake/gpuprio/gpuprioConfig.cmake" "$libdir/cmake/gpuprio/gpuprioConfigVersion.cmake"; do
    [ -f "$prefix/$f" ] && echo "ok: installed $f" || { echo "FAIL: $f not installed"; fails=$((fails + 1)); }
done
[ -x "$prefix/bin/gpuprio" ] || { echo "FAIL: bin/gpuprio not executable"; fails=$((fails + 1)); }

# The man page (generated from docs/cli.md; GNUInstallDirs' MANDIR is share/man), and man renders
# it from the installed tree.
man_page=$prefix/share/man/man1/gpuprio.1.gz
if [ -f "$man_page" ]; then
    echo "ok: installed share/man/man1/gpuprio.1.gz"
    if command -v man >/dev/null 2>&1; then
        text=$(env -u MANPATH MANPAGER=cat PAGER=cat MANWIDTH=80 man -l "$man_page" 2>&1)
        case "$text" in
        *"GPUPRIO(1)"*"NAME"*"gpuprio - "*) echo "ok: man -l renders the installed page" ;;
        *)
            echo "FAIL: man -l $man_page: $(printf '%s\n' "$text" | head -n 5)"
            fails=$((fails + 1))
            ;;
        esac
        expect "MANPATH finds the installed page" "$man_page" \
            "$(MANPATH=$prefix/share/man man -w gpuprio 2>&1)"
    else
        echo "skipped: man is not installed"
    fi
else
    echo "FAIL: share/man/man1/gpuprio.1.gz not installed"
    fails=$((fails + 1))
fi

# The installed command preloads the installed library, by absolute path.
preloaded() { # PREFIX: what LD_PRELOAD the command run by PREFIX/bin/gpuprio sees
    if [ -z "$san" ]; then
        env -u LD_PRELOAD "$1/bin/gpuprio" run -p high -- sh -c 'echo "$GPUPRIO_PRIORITY $LD_PRELOAD"'
    else
        env -u LD_PRELOAD "$1/bin/gpuprio" run -p high -- "$child" env - |
            sed -n 's/^priority=//p; s/^LD_PRELOAD=//p' | tr '\n' ' ' | sed 's/ $//'
        echo
    fi
}
out=$(preloaded "$prefix")
case "$out" in
"high $prefix/$libdir/libgpuprio-hip.so"*) echo "ok: installed gpuprio run: $out" ;;
*) echo "FAIL: installed gpuprio run: '$out'"; fails=$((fails + 1)) ;;
esac
# The tree works wherever it is put.
mv "$prefix" "$tmp/moved"
out=$(preloaded "$tmp/moved")
case "$out" in
"high $tmp/moved/$libdir/libgpuprio-hip.so"*) echo "ok: moved tree: $out" ;;
*) echo "FAIL: moved tree: '$out'"; fails=$((fails + 1)) ;;
esac
mv "$tmp/moved" "$prefix"

# pkg-config.
if command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
    expect "pkg-config --cflags" "-I$prefix/include" "$(pkg-config --cflags gpuprio | sed 's/ *$//')"
    expect "pkg-config --libs" "-L$prefix/$libdir" "$(pkg-config --libs gpuprio | sed 's/ *$//')"
    expect "pkg-config --modversion" "$("$prefix/bin/gpuprio" --version | sed 's/^gpuprio //')" \
        "$(pkg-config --modversion gpuprio)"
    # A preload variable for each library installed, and none for a library that is not.
    for platform in hip cuda; do
        lib=$prefix/$libdir/libgpuprio-$platform.so
        [ -f "$lib" ] || lib=
        expect "pkg-config preload_$platform" "$lib" \
            "$(pkg-config --variable=preload_$platform gpuprio)"
    done
else
    echo "skipped: pkg-config is not installed"
fi

# find_package(gpuprio) in a small project.
mkdir "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(gpuprio 0.1 REQUIRED)
add_executable(use_headers use_headers.c)
target_link_libraries(use_headers PRIVATE gpuprio::headers)
add_executable(use_api use_api.c)
target_link_libraries(use_api PRIVATE gpuprio::hip)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt "${gpuprio_EXECUTABLE}\n${gpuprio_PRELOAD_HIP}\n")
CMAKE
cat >"$tmp/consumer/use_headers.c" <<'C'
#include <gpuprio.h>
#include <stdio.h>
int main(void)
{
    printf("%d.%d.%d %d\n", GPUPRIO_VERSION_MAJOR, GPUPRIO_VERSION_MINOR, GPUPRIO_VERSION_PATCH,
           GPUPRIO_PRIORITY_HIGH);
    return 0;
}
C
cat >"$tmp/consumer/use_api.c" <<'C'
#include <gpuprio.h>
#include <stdio.h>
int main(void)
{
    int p = 0;
    printf("%s %d\n", gpuprio_version(), gpuprio_thread_get_priority(&p) == 0 ? p : -1);
    return 0;
}
C
if ! "$cmake" -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
    >"$tmp/consumer.log" 2>&1 ||
    ! "$cmake" --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1; then
    echo "FAIL: the find_package(gpuprio) project did not configure or build:"
    cat "$tmp/consumer.log"
    fails=$((fails + 1))
else
    version=$("$prefix/bin/gpuprio" --version | sed 's/^gpuprio //')
    expect "gpuprio::headers" "$version 10" "$(env -u LD_PRELOAD "$tmp/consumer/build/use_headers")"
    expect "gpuprio::hip" "$version -1" "$(env -u LD_PRELOAD "$tmp/consumer/build/use_api")"
    expect "gpuprio_EXECUTABLE, gpuprio_PRELOAD_HIP" \
        "$prefix/bin/gpuprio $prefix/$libdir/libgpuprio-hip.so" \
        "$(tr '\n' ' ' <"$tmp/consumer/build/found.txt" | sed 's/ $//')"
fi

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]

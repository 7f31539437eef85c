#!/bin/sh
# deb.sh - package.deb: scripts/package.sh makes a lintian-clean .deb of this build's
# configuration, and what it installs works:
#   (a) dpkg-deb -I/-c: the control fields, a Depends on libc6 and on no GPU runtime, the ldconfig
#       trigger, and the files (command, the libraries built and no other, header, pkg-config and
#       CMake files, man page, docs, copyright, changelog, lintian overrides);
#   (b) unpacked into a scratch root (dpkg-deb -x): stripped ELF files without a DT_NEEDED on a
#       GPU runtime; usr/bin/gpuprio --version; gpuprio run preloads the scratch root's library;
#       man renders the page; pkg-config, pointed into the root, gives its include directory and a
#       program compiles against gpuprio.h;
#   (c) as root, with dpkg there, no gpuprio package installed and none of the package's files on
#       the system: dpkg -i, the same checks against /usr, then dpkg --purge, after which every
#       file is gone, and every directory that was there before is still there. A trap purges the
#       package on any exit, so the system is left as it was found (dpkg's log and the ldconfig
#       cache, rebuilt by the trigger, are the only traces).
#
#   deb.sh CMAKE SOURCE_DIR BUILD_DIR VERSION LIBS CC [CMAKE-ARGS...]
#
# LIBS: the libraries this configuration builds, "hip", "cuda" or "hip,cuda", with ",slurm" where
# it builds the Slurm plugin (LIBDIR/slurm-wlm/spank_gpuprio.so, then checked as the libraries). BUILD_DIR is the
# package's build tree, kept between runs so that a second run only rebuilds what changed.
# CMAKE-ARGS go to package.sh's configure step. Exits 77 (skipped) without dpkg-deb or
# dpkg-shlibdeps.
set -u
cmake=$1 src=$2 build=$3 version=$4 libs=$5 cc=$6
shift 6
. "$(dirname "$0")/../tools/expect.sh"
check() { # WHAT COMMAND...: ok when COMMAND succeeds
    what=$1
    shift
    if "$@" >/dev/null 2>&1; then
        echo "ok: $what"
    else
        echo "FAIL: $what"
        fails=$((fails + 1))
    fi
}

for t in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
    command -v $t >/dev/null 2>&1 || { echo "skipped: $t is not installed (dpkg-dev)"; exit 77; }
done
tmp=$(mktemp -d)
installed=0
cleanup() {
    if [ $installed = 1 ]; then
        dpkg --purge gpuprio >/dev/null 2>&1 || echo "FAIL: dpkg --purge gpuprio in the trap failed"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
tmp=$(cd "$tmp" && pwd -P)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg --print-architecture)
has() { case ",$libs," in *",$1,"*) return 0 ;; esac; return 1; }

# The package.
if ! CMAKE=$cmake GPUPRIO_PACKAGE_BUILD_DIR=$build sh "$src/scripts/package.sh" "$tmp/out" "$@" \
    >"$tmp/package.log" 2>&1; then
    cat "$tmp/package.log"
    echo "FAIL: scripts/package.sh"
    exit 1
fi
deb=$(tail -n 1 "$tmp/package.log")
expect "package file" "$tmp/out/gpuprio_${version}_$arch.deb" "$deb"
[ -f "$deb" ] || { echo "FAIL: no $deb"; exit 1; }
if command -v lintian >/dev/null 2>&1; then
    sed -n '/^lintian gpuprio/,/^lintian: /p' "$tmp/package.log"
    check "lintian: no errors or warnings (scripts/package.sh)" \
        grep -q '^lintian: no errors or warnings$' "$tmp/package.log"
else
    echo "skipped: lintian is not installed"
fi

# (a) The control fields and the file list.
field() { dpkg-deb -f "$deb" "$1"; }
expect "Package" gpuprio "$(field Package)"
expect "Version" "$version" "$(field Version)"
expect "Architecture" "$arch" "$(field Architecture)"
expect "Section, Priority" "utils optional" "$(field Section) $(field Priority)"
depends=$(field Depends)
echo "Depends: $depends"
case "$depends" in
*libc6*) echo "ok: Depends names libc6" ;;
*) echo "FAIL: Depends does not name libc6: '$depends'"; fails=$((fails + 1)) ;;
esac
case "$depends" in
*amdhip* | *libcuda* | *hsa* | *rocm* | *nvidia*)
    echo "FAIL: Depends names a GPU runtime: '$depends'"; fails=$((fails + 1)) ;;
*) echo "ok: Depends names no GPU runtime" ;;
esac
[ -n "$(field Maintainer)" ] && echo "ok: Maintainer: $(field Maintainer)" ||
    { echo "FAIL: no Maintainer"; fails=$((fails + 1)); }
mkdir "$tmp/control"
dpkg-deb -e "$deb" "$tmp/control"
check "the ldconfig trigger" grep -qx 'activate-noawait ldconfig' "$tmp/control/triggers"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/contents"
want="/usr/bin/gpuprio /usr/include/gpuprio.h /usr/lib/$ma/pkgconfig/gpuprio.pc
      /usr/lib/$ma/cmake/gpuprio/gpuprioConfig.cmake
      /usr/lib/$ma/cmake/gpuprio/gpuprioConfigVersion.cmake
      /usr/share/man/man1/gpuprio.1.gz /usr/share/doc/gpuprio/copyright
      /usr/share/doc/gpuprio/changelog.gz /usr/share/doc/gpuprio/README.md
      /usr/share/doc/gpuprio/docs/cli.md /usr/share/lintian/overrides/gpuprio
      /usr/lib/tmpfiles.d/gpuprio.conf"
for l in hip cuda; do
    has $l && want="$want /usr/lib/$ma/libgpuprio-$l.so"
done
for f in $want; do
    check "in the package: $f" grep -qx "$f" "$tmp/contents"
done
has slurm && want="$want /usr/lib/$ma/slurm-wlm/spank_gpuprio.so"
has slurm || check "not in the package: the Slurm plugin (not built)" \
    sh -c "! grep -q spank_gpuprio '$tmp/contents'"
for l in hip cuda; do
    has $l && continue
    check "not in the package: libgpuprio-$l.so (not built)" \
        sh -c "! grep -q 'libgpuprio-$l' '$tmp/contents'"
done

# (b) Unpacked into a scratch root.
root=$tmp/root
dpkg-deb -x "$deb" "$root"
check "/run/gpuprio made at boot: root's, sticky, open to all (configuration.md)" \
    grep -qx 'd /run/gpuprio 1777 root root -' "$root/usr/lib/tmpfiles.d/gpuprio.conf"
elves="$root/usr/bin/gpuprio $(echo "$root/usr/lib/$ma"/libgpuprio-*.so)"
has slurm && elves="$elves $root/usr/lib/$ma/slurm-wlm/spank_gpuprio.so"
for f in $elves; do
    n=${f#"$root"}
    if readelf -S "$f" | grep -q -e '\.symtab' -e '\.debug_'; then
        echo "FAIL: $n is not stripped"; fails=$((fails + 1))
    else
        echo "ok: $n is stripped"
    fi
done
# Built with Debian's hardening flags (package.sh): read-only relocations, binding at load time,
# fortified functions.
for f in $elves; do
    n=${f#"$root"}
    check "$n: RELRO" sh -c "readelf -lW '$f' | grep -q GNU_RELRO"
    check "$n: BIND_NOW" sh -c "readelf -dW '$f' | grep -q BIND_NOW"
    check "$n: fortified functions" sh -c "readelf --dyn-syms -W '$f' | grep -q '_chk@'"
done
for f in "$root/usr/lib/$ma"/libgpuprio-*.so; do
    if out=$(sh "$src/tests/preload/check-needed.sh" "$f" 2>&1); then
        echo "ok: ${f#"$root"}: $(echo "$out" | head -n 1)"
    else
        echo "FAIL: ${f#"$root"}: $out"; fails=$((fails + 1))
    fi
done

# The checks of an installed tree, at ROOT ("" for the system): the command, gpuprio run, the man
# page, pkg-config.
shim=hip
has hip || shim=cuda
installed_checks() { # ROOT WHERE
    r=$1 where=$2
    expect "$where: gpuprio --version" "gpuprio $version" "$("$r/usr/bin/gpuprio" --version 2>&1)"
    out=$(env -u LD_PRELOAD -u GPUPRIO_LIBRARY_DIR "$r/usr/bin/gpuprio" run --shim $shim -- \
        sh -c 'echo "$LD_PRELOAD"' 2>&1)
    expect "$where: gpuprio run preloads $r/usr/lib/$ma/libgpuprio-$shim.so" \
        "$r/usr/lib/$ma/libgpuprio-$shim.so" "$out"
}
installed_checks "$root" "scratch root"
if command -v man >/dev/null 2>&1; then
    text=$(env -u MANPATH MANPAGER=cat PAGER=cat MANWIDTH=80 \
        man -l "$root/usr/share/man/man1/gpuprio.1.gz" 2>&1)
    case "$text" in
    *"GPUPRIO(1)"*"NAME"*"gpuprio - "*) echo "ok: scratch root: man -l renders the page" ;;
    *)
        echo "FAIL: scratch root: man -l: $(printf '%s\n' "$text" | head -n 5)"
        fails=$((fails + 1))
        ;;
    esac
    expect "scratch root: MANPATH finds the page" "$root/usr/share/man/man1/gpuprio.1.gz" \
        "$(MANPATH=$root/usr/share/man man -w gpuprio 2>&1)"
else
    echo "skipped: man is not installed"
fi
if command -v pkg-config >/dev/null 2>&1; then
    pc() {
        PKG_CONFIG_LIBDIR=$root/usr/lib/$ma/pkgconfig PKG_CONFIG_PATH='' \
            PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@" gpuprio | sed 's/ *$//'
    }
    expect "scratch root: pkg-config --cflags" "-I$root/usr/include" "$(pc --cflags)"
    expect "scratch root: pkg-config --modversion" "$version" "$(pc --modversion)"
    cat >"$tmp/use.c" <<'C'
#include <gpuprio.h>
int main(void) { return GPUPRIO_PRIORITY_HIGH > GPUPRIO_PRIORITY_LOW ? 0 : 1; }
C
    # shellcheck disable=SC2046
    check "scratch root: a program compiles against gpuprio.h with pkg-config --cflags" \
        "$cc" $(pc --cflags) -c "$tmp/use.c" -o "$tmp/use.o"
else
    echo "skipped: pkg-config is not installed"
fi

# (c) dpkg -i and dpkg --purge, as root, where the system holds no gpuprio.
skip_install() {
    echo "skipped: dpkg -i: $1"
    [ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
    [ $fails = 0 ]
    exit
}
[ "$(id -u)" = 0 ] || skip_install "not root"
command -v dpkg >/dev/null 2>&1 || skip_install "no dpkg"
# Any state but not-installed (installed, half-installed, config-files) is someone else's.
state=$(dpkg-query -W -f='${db:Status-Abbrev}' gpuprio 2>/dev/null)
case "$state" in
"" | ?n*) ;;
*) skip_install "dpkg has a gpuprio package already (state '$state')" ;;
esac
grep -v '/$' "$tmp/contents" >"$tmp/files"
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then skip_install "$f exists on this system"; fi
done <"$tmp/files"
grep '/$' "$tmp/contents" | sed 's|/$||' | while read -r d; do
    [ -d "$d" ] && echo "$d"
done >"$tmp/dirs-before"

# Docker images often tell dpkg not to unpack man pages (path-exclude=/usr/share/man/*): then the
# installed page is not there to check. dpkg reads the fragments, then dpkg.cfg; the last rule
# that matches a path decides, as in dpkg.
man_page=/usr/share/man/man1/gpuprio.1.gz
man_excluded=$(cat /etc/dpkg/dpkg.cfg.d/* /etc/dpkg/dpkg.cfg 2>/dev/null | awk -v p="$man_page" '
    function glob2re(g) { gsub(/[.+^$(){}|\\]/, "\\\\&", g); gsub(/\*/, ".*", g); gsub(/\?/, ".", g)
                          return "^" g "$" }
    /^[ \t]*path-(ex|in)clude[ \t=]/ {
        rule = $0; sub(/^[ \t]*path-/, "", rule); kind = substr(rule, 1, 7)
        pat = substr(rule, 9); sub(/^[ \t=]+/, "", pat); sub(/[ \t]+$/, "", pat)
        if (p ~ glob2re(pat)) ex = (kind == "exclude")
    }
    END { print ex ? 1 : 0 }')

if ! dpkg -i "$deb" >"$tmp/dpkg-i.log" 2>&1; then
    if grep -q 'lock' "$tmp/dpkg-i.log"; then
        skip_install "dpkg is locked by another process: $(tail -n 1 "$tmp/dpkg-i.log")"
    fi
    installed=1 # a half-installed package is purged by the trap
    cat "$tmp/dpkg-i.log"
    echo "FAIL: dpkg -i $deb"
    exit 1
fi
installed=1
echo "ok: dpkg -i $(basename "$deb")"
installed_checks "" "installed"
if [ "$man_excluded" = 1 ]; then
    echo "skipped: installed man page: /etc/dpkg/dpkg.cfg.d excludes $man_page (path-exclude," \
        "as in Docker images), so dpkg did not unpack it"
elif command -v man >/dev/null 2>&1; then
    check "installed: $man_page" test -f "$man_page"
    text=$(env -u MANPATH MANPAGER=cat PAGER=cat MANWIDTH=80 man gpuprio 2>&1 | head -n 8)
    case "$text" in
    *"GPUPRIO(1)"*"NAME"*"gpuprio - "*) echo "ok: installed: man gpuprio" ;;
    *) echo "FAIL: installed: man gpuprio: $text"; fails=$((fails + 1)) ;;
    esac
    where=$(env -u MANPATH man -aw gpuprio 2>&1)
    case "$where" in
    *"$man_page"*) echo "ok: installed: man -aw gpuprio finds $man_page" ;;
    *) echo "FAIL: installed: man -aw gpuprio: $where"; fails=$((fails + 1)) ;;
    esac
fi
if command -v pkg-config >/dev/null 2>&1; then
    sys_pc() { env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR "$@"; }
    # pkg-config leaves out -I/usr/include, a directory the compiler searches anyway, unless asked.
    check "installed: pkg-config --cflags gpuprio" sys_pc pkg-config --cflags gpuprio
    expect "installed: pkg-config --cflags (system directories kept)" "-I/usr/include" \
        "$(sys_pc PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --cflags gpuprio | sed 's/ *$//')"
    expect "installed: pkg-config --modversion" "$version" \
        "$(sys_pc pkg-config --modversion gpuprio)"
fi

if dpkg --purge gpuprio >"$tmp/dpkg-r.log" 2>&1; then
    installed=0
    echo "ok: dpkg --purge gpuprio"
else
    cat "$tmp/dpkg-r.log"
    echo "FAIL: dpkg --purge gpuprio"; fails=$((fails + 1))
fi
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$tmp/files")
expect "after purge: no file of the package is left" "" "$left"
state=$(dpkg-query -W -f='${db:Status-Abbrev}' gpuprio 2>/dev/null)
case "$state" in
"" | ?n*) echo "ok: after purge: dpkg has no gpuprio" ;;
*) echo "FAIL: after purge: dpkg has gpuprio in state '$state'"; fails=$((fails + 1)) ;;
esac
gone=$(while read -r d; do [ -d "$d" ] || echo "$d"; done <"$tmp/dirs-before")
if [ -n "$gone" ]; then
    # dpkg removes an empty directory that no other package owns; put back what was there.
    echo "$gone" | while read -r d; do mkdir -p "$d"; done
    echo "FAIL: after purge: directories that were there before were removed: $gone"
    fails=$((fails + 1))
else
    echo "ok: after purge: every directory that was there before is still there"
fi

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]

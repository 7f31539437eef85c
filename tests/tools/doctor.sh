#!/bin/sh
# doctor.sh - gpuprio doctor on the simulated device: with the board directory on tmpfs,
# Level 2 with direct gates, no problem, exit 0; with it on a disk directory, Level 2 with
# mirrored gates (what that costs, and tmpfs as the way to direct ones, said in the board line),
# no problem, exit 0; a refused setting is a problem naming the variable; the JSON output parses
# and says the same; settings say where they came from. Per device: the simulated device's
# hardware stream priorities (1 to -1) and whether created streams get them (not with
# GPUPRIO_HW_PRIORITY=off), MPS not applicable (HIP), and GPUPRIO_CU_RESERVE: none unset, the
# compute units a percentage keeps on a device of 8 (2 of 8 for 25%), and a count that would leave
# the lower priorities none, a problem with its fix. As root, the administrator's file's cap,
# share and weight for the user, shown.
#
#   doctor.sh GPUPRIO HIP_SIM_LIBRARY DISK_DIR
set -u
gpuprio=$1 sim=$2 disk=$3
. "$(dirname "$0")/expect.sh"
sandbox doctor
diskboards=
cleanup() {
    sandbox_cleanup
    [ -z "$diskboards" ] || rm -rf "$diskboards"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export GPUPRIO_HIP_LIBRARY=$sim GPUPRIO_CONFIG=$tmp/absent.conf
mkdir -m 700 "$tmp/boards"
json() { # FILE EXPRESSION(on d): python3 prints it
    python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

GPUPRIO_BOARD_DIR=$tmp/boards "$gpuprio" doctor >"$tmp/tmpfs.txt" 2>"$tmp/tmpfs.err"
expect "tmpfs board: exit status" 0 $?
expect "tmpfs board: device 0 at Level 2" 1 "$(grep -c '^  device 0 .*: Level 2 ' "$tmp/tmpfs.txt")"
expect "tmpfs board: no problems" 1 "$(grep -c '^no problems' "$tmp/tmpfs.txt")"
expect "tmpfs board: the directory and its filesystem" 1 \
    "$(grep -c "^board directory: $tmp/boards (from environment), on tmpfs, .*mode 0700: Level 2's gates can live there (direct)" "$tmp/tmpfs.txt")"
expect "the runtime bound (from the environment)" 1 \
    "$(grep -c "^HIP runtime: $sim (found: environment" "$tmp/tmpfs.txt")"
expect "a setting from the environment" 1 "$(grep -c "^  GPUPRIO_BOARD_DIR=$tmp/boards (environment)" "$tmp/tmpfs.txt")"
expect "a setting by default" 1 "$(grep -c '^  GPUPRIO_WINDOW=16 (default)' "$tmp/tmpfs.txt")"
expect "hardware priorities: the device's range, given to streams" 1 \
    "$(grep -c '^    hardware stream priorities: 1 (least) to -1 (greatest), given to created streams' "$tmp/tmpfs.txt")"
expect "MPS: not applicable on HIP" 1 "$(grep -c '^    MPS: not applicable' "$tmp/tmpfs.txt")"
expect "CU reservation: none when unset" 1 "$(grep -c '^    CU reservation: none' "$tmp/tmpfs.txt")"

GPUPRIO_BOARD_DIR=$tmp/boards "$gpuprio" doctor --json >"$tmp/tmpfs.json" 2>"$tmp/tmpfs.json.err"
expect "tmpfs board --json: exit status" 0 $?
expect "--json: level of device 0" 2 "$(json "$tmp/tmpfs.json" 'd["runtimes"][0]["devices"][0]["level"]')"
expect "--json: gates can live there" True "$(json "$tmp/tmpfs.json" 'd["board"]["gates_can_live_there"]')"
expect "--json: direct gates" direct "$(json "$tmp/tmpfs.json" 'd["board"]["gates"]')"
expect "--json: filesystem" tmpfs "$(json "$tmp/tmpfs.json" 'd["board"]["filesystem"]')"
expect "--json: no problems" 0 "$(json "$tmp/tmpfs.json" 'len(d["problems"])')"
expect "--json: every setting listed" 1 \
    "$(json "$tmp/tmpfs.json" '[s["from"] for s in d["settings"] if s["name"] == "GPUPRIO_LEVEL"].count("default")')"
expect "--json: hardware priorities" "{'least': 1, 'greatest': -1, 'given_to_streams': True}" \
    "$(json "$tmp/tmpfs.json" 'd["runtimes"][0]["devices"][0]["hardware_priorities"]')"
expect "--json: MPS not applicable" None "$(json "$tmp/tmpfs.json" 'd["runtimes"][0]["devices"][0]["mps"]')"
expect "--json: no CU reservation" None "$(json "$tmp/tmpfs.json" 'd["runtimes"][0]["devices"][0]["cu_reserve"]')"

GPUPRIO_BOARD_DIR=$tmp/boards GPUPRIO_HW_PRIORITY=off "$gpuprio" doctor >"$tmp/hwoff.txt" 2>"$tmp/hwoff.err"
expect "GPUPRIO_HW_PRIORITY=off: exit status" 0 $?
expect "GPUPRIO_HW_PRIORITY=off: the range, not used" 1 \
    "$(grep -c '^    hardware stream priorities: 1 (least) to -1 (greatest), not used (GPUPRIO_HW_PRIORITY=off)' "$tmp/hwoff.txt")"

export HIPSIM_COMPUTE_SLOTS=8
GPUPRIO_BOARD_DIR=$tmp/boards GPUPRIO_CU_RESERVE=25% "$gpuprio" doctor >"$tmp/reserve.txt" 2>"$tmp/reserve.err"
expect "GPUPRIO_CU_RESERVE=25%: exit status" 0 $?
expect "GPUPRIO_CU_RESERVE=25%: 2 of 8 compute units kept" 1 \
    "$(grep -c '^    CU reservation: 2 of the 8 compute units kept for a process.s highest priority: .*confined to the other 6 (GPUPRIO_CU_RESERVE=25%)' "$tmp/reserve.txt")"
GPUPRIO_BOARD_DIR=$tmp/boards GPUPRIO_CU_RESERVE=25% "$gpuprio" doctor --json >"$tmp/reserve.json" 2>"$tmp/reserve.json.err"
expect "GPUPRIO_CU_RESERVE=25% --json" "25% cu_mask True 2 8 compute units" \
    "$(json "$tmp/reserve.json" '" ".join(str(v) for k, v in d["runtimes"][0]["devices"][0]["cu_reserve"].items() if k != "what")')"
GPUPRIO_BOARD_DIR=$tmp/boards GPUPRIO_CU_RESERVE=8 "$gpuprio" doctor >"$tmp/reserve-all.txt" 2>"$tmp/reserve-all.err"
expect "GPUPRIO_CU_RESERVE=8 of 8: exit status" 1 $?
expect "GPUPRIO_CU_RESERVE=8 of 8: the problem" 1 \
    "$(grep -c '^  HIP device 0: GPUPRIO_CU_RESERVE=8: the device has 8 compute units .*no compute units are reserved' "$tmp/reserve-all.txt")"
expect "GPUPRIO_CU_RESERVE=8 of 8: its fix" 1 "$(grep -c '^    fix: set GPUPRIO_CU_RESERVE to a count below 8 ' "$tmp/reserve-all.txt")"
GPUPRIO_BOARD_DIR=$tmp/boards GPUPRIO_CU_RESERVE=8 "$gpuprio" doctor --json >"$tmp/reserve-all.json" 2>"$tmp/reserve-all.json.err"
expect "GPUPRIO_CU_RESERVE=8 of 8 --json: not in effect" "cu_mask False" \
    "$(json "$tmp/reserve-all.json" '" ".join(str(d["runtimes"][0]["devices"][0]["cu_reserve"][k]) for k in ("by", "in_effect"))')"
unset HIPSIM_COMPUTE_SLOTS

case $(stat -f -c %T "$disk") in
tmpfs | hugetlbfs) echo "note: $disk is on tmpfs: the disk board case is skipped" ;;
*)
    diskboards=$(mktemp -d "$disk/gpuprio-doctor-boards.XXXXXX") || exit 1
    GPUPRIO_BOARD_DIR=$diskboards "$gpuprio" doctor >"$tmp/disk.txt" 2>"$tmp/disk.err"
    expect "disk board: exit status" 0 $?
    expect "disk board: device 0 at Level 2, mirrored" 1 "$(grep -c '^  device 0 .*: Level 2 (asked for.*; its gates mirrored: the board directory' "$tmp/disk.txt")"
    expect "disk board: the directory, mirrored, and the way to direct gates" 1 \
        "$(grep -c "^board directory: $diskboards (from environment), on [a-z0-9]*, .*: Level 2's gates cannot live there, so they are mirrored: .*GPUPRIO_BOARD_DIR=/dev/shm" "$tmp/disk.txt")"
    expect "disk board: no problems" 1 "$(grep -c '^no problems' "$tmp/disk.txt")"
    GPUPRIO_BOARD_DIR=$diskboards "$gpuprio" doctor --json >"$tmp/disk.json" 2>"$tmp/disk.json.err"
    expect "disk board --json: exit status" 0 $?
    expect "disk board --json: level" 2 "$(json "$tmp/disk.json" 'd["runtimes"][0]["devices"][0]["level"]')"
    expect "disk board --json: gates cannot live there" False "$(json "$tmp/disk.json" 'd["board"]["gates_can_live_there"]')"
    expect "disk board --json: mirrored gates" mirrored "$(json "$tmp/disk.json" 'd["board"]["gates"]')"
    expect "disk board --json: no problems" 0 "$(json "$tmp/disk.json" 'len(d["problems"])')"
    GPUPRIO_LEVEL=1 GPUPRIO_BOARD_DIR=$diskboards "$gpuprio" doctor >"$tmp/level1.txt" 2>&1
    expect "disk board with GPUPRIO_LEVEL=1: nothing asked for is missing" 0 $?
    ;;
esac

GPUPRIO_BOARD_DIR=$tmp/boards GPUPRIO_WINDOW=lots "$gpuprio" doctor >"$tmp/bad.txt" 2>"$tmp/bad.err"
expect "a refused setting: exit status" 1 $?
expect "a refused setting: the problem" 1 "$(grep -c "^  GPUPRIO_WINDOW='lots' is not accepted" "$tmp/bad.txt")"
expect "a refused setting: its fix" 1 "$(grep -c '^    fix: set GPUPRIO_WINDOW to ' "$tmp/bad.txt")"

"$gpuprio" doctor --bogus >/dev/null 2>&1
expect "a bad option: exit status" 2 $?

# The administrator's file setting a cap, a share and a weight for this user: each is shown (the
# file must be root's: as root only).
if [ "$(id -u)" = 0 ]; then
    printf 'cap.default = low\nshare.%s = 10\nweight.%s = 3\n' "$(id -u)" "$(id -u)" >"$tmp/set.conf"
    chmod 644 "$tmp/set.conf"
    GPUPRIO_CONFIG=$tmp/set.conf GPUPRIO_BOARD_DIR=$tmp/boards "$gpuprio" doctor >"$tmp/conf.txt" 2>"$tmp/conf.err"
    expect "a file's settings: exit status" 0 $?
    expect "a file's settings: shown" 1 \
        "$(grep -c "^administrator's file: $tmp/set.conf: used; cap -10; share 10; weight 3\$" "$tmp/conf.txt")"
    GPUPRIO_CONFIG=$tmp/set.conf GPUPRIO_BOARD_DIR=$tmp/boards "$gpuprio" doctor --json >"$tmp/conf.json" 2>"$tmp/conf.json.err"
    expect "a file's settings --json: exit status" 0 $?
    expect "a file's settings --json" "True -10 10 3" \
        "$(json "$tmp/conf.json" '" ".join(str(d["config"][k]) for k in ("used", "cap", "share", "weight"))')"
fi

if [ "$fails" -gt 0 ]; then
    for f in "$tmp"/*.txt "$tmp"/*.json "$tmp"/*.err; do
        [ -s "$f" ] && { echo "--- $f"; cat "$f"; }
    done
fi
[ "$fails" -eq 0 ]

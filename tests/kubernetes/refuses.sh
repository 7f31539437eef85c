#!/bin/sh
# refuses.sh - kubernetes.checker_refuses: check_manifests.py fails each of deploy/kubernetes's
# manifests broken in one way (so kubernetes.manifests can fail): a misspelt field, a CDI device
# the spec does not have, a selector that misses the template's labels, a mount of no volume,
# a relative hostPath, an unknown kind, a single-file mount replaced by install (EBUSY on a
# node), the spec written where no runtime looks, and a configuration file gpuprio refuses.
#
#   refuses.sh GPUPRIO MANIFEST_DIR
set -u
gpuprio=$1 dir=$2
. "$(dirname "$0")/../tools/expect.sh"
check=$(dirname "$0")/check_manifests.py
python3 -c 'import yaml' 2>/dev/null || { echo "skipped: python3-yaml is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
refused() { # WHAT FILE SED-EXPRESSION EXPECTED-FAIL-TEXT
    sed "$3" "$dir/$2" >"$tmp/$2"
    if cmp -s "$dir/$2" "$tmp/$2"; then
        echo "FAIL: $1: the change did not apply to $2"
        fails=$((fails + 1))
        return
    fi
    python3 "$check" "$gpuprio" "$tmp/$2" >"$tmp/out" 2>&1
    if [ $? = 1 ] && grep -q -- "$4" "$tmp/out"; then
        echo "ok: refused: $1"
    else
        echo "FAIL: not refused as expected: $1 (wanted '$4'):"
        cat "$tmp/out"
        fails=$((fails + 1))
    fi
}
refused "a misspelt field" gpuprio-node.yaml 's/volumeMounts:/volumeMount:/' "volumeMount: no such field"
refused "a device the spec does not have" pods-example.yaml 's/priority=high/priority=urgent/' \
    "'gpuprio.dev/priority=urgent' is not a device"
refused "a policy's device the spec does not have" priorityclass-kyverno.yaml 's/priority=low/priority=lowest/' \
    "'gpuprio.dev/priority=lowest' is not a device"
refused "a selector missing the labels" gpuprio-node.yaml '/matchLabels:/{n;s/gpuprio/other/}' \
    "does not match the template's labels"
refused "a mount of no volume" gpuprio-node.yaml 's/{name: textfile, mountPath/{name: texts, mountPath/' \
    "mount of volume 'texts'"
refused "a relative hostPath" gpuprio-node.yaml 's|path: /var/run/cdi,|path: var/run/cdi,|' \
    "hostPath.path must be absolute"
refused "an unknown kind" pods-example.yaml 's/^kind: Pod/kind: Pods/' "unknown apiVersion/kind"
refused "a single-file mount replaced" gpuprio-node.yaml \
    's|cat /config/gpuprio.conf >/etc/gpuprio.conf|install -m 644 /config/gpuprio.conf /etc/gpuprio.conf|' \
    "replaces /etc/gpuprio.conf, a single-file mount"
refused "the spec where no runtime looks" gpuprio-node.yaml 's|cdi --output /var/run/cdi|cdi --output /tmp/cdi|' \
    "where no runtime looks"
if [ "$(id -u)" = 0 ]; then
    refused "a configuration file gpuprio refuses" gpuprio-node.yaml 's/cap.default = high/cap.default = urgent/' \
        "gpuprio does not use the file"
fi
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]

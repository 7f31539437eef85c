#!/bin/sh
# check-needed.sh LIB: fails if LIB has a DT_NEEDED entry on a GPU runtime. gpuprio binds to the
# runtime the application loaded; a link-time dependency could load a second copy.
set -eu
needed=$(readelf -d "$1" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $5); print $5 }')
echo "NEEDED: $(echo $needed)"
bad=$(echo "$needed" | grep -E 'amdhip|hsa-runtime|libcuda|libcudart|libnvrtc' || true)
[ -z "$bad" ] || { echo "depends on a GPU runtime: $bad"; exit 1; }

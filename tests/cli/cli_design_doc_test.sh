#!/usr/bin/env bash
# Issue 40: docs/design.md drifted from the code (a pass that did not exist,
# half of the passes, folders of another time). Two pictures in it are
# checked against the code, so they cannot drift again:
# - every pass the pipeline picture names is in `hostir passes`, in the
#   table's order;
# - the layer picture lists every folder of src/hostir/, and no folder that
#   is gone.
# Usage: cli_design_doc_test.sh HOSTIR_BINARY SOURCE_DIR
set -uo pipefail
hostir=$1
source_dir=$2
design=$source_dir/docs/design.md

# The fenced block that follows a heading, without its fences.
block_after() {
  awk -v heading="$1" '
    $0 == heading { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$design"
}

table=$("$hostir" passes | tail -n +2 | awk '{for (i = 2; i <= NF; ++i) if ($i ~ /_/) {print $i; next}}') ||
  { echo "FAIL: hostir passes failed"; exit 1; }
named=$(block_after "## The pipeline" | grep -oE '\b[a-z]+(_[a-z]+)+\b')
[[ -n "$named" ]] || { echo "FAIL: no pass named in design.md's pipeline picture"; exit 1; }
status=0
for pass in $named; do
  grep -qx "$pass" <<<"$table" || { echo "FAIL: design.md names pass '$pass', which 'hostir passes' does not list"; status=1; }
done
# The named passes keep the table's order.
in_table_order=$(grep -xF -f <(echo "$named") <<<"$table")
if [[ "$in_table_order" != "$named" ]]; then
  echo "FAIL: design.md's pipeline names the passes in another order than 'hostir passes':"
  diff <(echo "$named") <(echo "$in_table_order")
  status=1
fi
[[ $status == 0 ]] && echo "ok: the $(wc -l <<<"$named") passes design.md names are in the pass table, in order"

listed=$(block_after "## Layers and the dependency rule" |
  sed -nE 's#^  ([a-z_]+/([a-z_]+/)?) .*#\1#p' | sort)
actual=$(cd "$source_dir/src/hostir" && find . -mindepth 1 -type d | sed -E 's#^\./##; s#$#/#' | sort)
if [[ "$listed" != "$actual" ]]; then
  echo "FAIL: design.md's layer picture (<) and src/hostir's folders (>) differ:"
  diff <(echo "$listed") <(echo "$actual")
  status=1
else
  echo "ok: design.md lists the $(wc -l <<<"$actual") folders of src/hostir"
fi
exit $status

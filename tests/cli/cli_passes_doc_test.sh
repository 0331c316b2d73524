#!/usr/bin/env bash
# Issue 21: the docs quote the pass order instead of copying it. The block
# after `<!-- output: hostir passes -->` in docs/lowering.md must be exactly
# what `hostir passes` prints, and no other doc lists the passes by number.
# Usage: cli_passes_doc_test.sh HOSTIR_BINARY SOURCE_DIR
set -uo pipefail
hostir=$1
source_dir=$2
doc=$source_dir/docs/lowering.md

expected=$("$hostir" passes) || { echo "FAIL: hostir passes exited with $?"; exit 1; }
quoted=$(awk '/<!-- output: hostir passes -->/ {marker = 1; next}
              marker && /^```/ {if (inside) exit; inside = 1; next}
              inside {print}' "$doc")
if [[ "$quoted" != "$expected" ]]; then
  echo "FAIL: the block after '<!-- output: hostir passes -->' in docs/lowering.md differs from"
  echo "'hostir passes'; paste its output there:"
  diff <(echo "$quoted") <(echo "$expected")
  exit 1
fi
echo "ok: docs/lowering.md quotes hostir passes"

# A numbered list of pass names ("1. `validate_shardings`") anywhere else is
# a hand-written copy that will drift.
if grep -rnE '^\s*([0-9]+\.|\|\s*[0-9]+\s*\|)\s+`(validate_shardings|resharding_to_communication|stream_parallelization)`' \
    "$source_dir/README.md" "$source_dir/docs"; then
  echo "FAIL: a doc lists the passes by hand (above); quote or point to 'hostir passes'"
  exit 1
fi
echo "ok: no doc numbers the passes by hand"

#!/usr/bin/env bash
# Issue 21: the pass order lives in one place, the pass table
# (host_ir/passes/pass_registry.cpp), printed by `hostir passes`; docs point
# to the command instead of copying its output, so adding a pass touches
# its file, its test and one line of the table, and no doc drifts.
# Fails if a doc holds a row of the table (whitespace ignored) or numbers
# the passes by hand.
# Usage: cli_passes_doc_test.sh HOSTIR_BINARY SOURCE_DIR
set -uo pipefail
hostir=$1
source_dir=$2
docs=("$source_dir/README.md" "$source_dir"/docs/*.md)

table=$("$hostir" passes) || { echo "FAIL: hostir passes exited with $?"; exit 1; }
rows=$(echo "$table" | tail -n +2 | awk '{$1 = $1; print}')
[[ $(echo "$rows" | wc -l) -ge 10 ]] || { echo "FAIL: hostir passes printed too few rows:"; echo "$table"; exit 1; }
copied=$(awk 'NR == FNR {row[$0] = 1; next} {line = $0; $1 = $1} $0 in row {print FILENAME ":" FNR ": " line}' \
  <(echo "$rows") "${docs[@]}")
if [[ -n "$copied" ]]; then
  echo "$copied"
  echo "FAIL: a doc copies rows of 'hostir passes' (above); point to the command instead"
  exit 1
fi
echo "ok: no doc copies the pass table"

# A numbered list of pass names ("1. `validate_shardings`") is a hand-written
# copy that will drift.
if grep -nE '^\s*([0-9]+\.|\|\s*[0-9]+\s*\|)\s+`(validate_shardings|resharding_to_communication|stream_parallelization)`' \
    "${docs[@]}"; then
  echo "FAIL: a doc lists the passes by hand (above); point to 'hostir passes'"
  exit 1
fi
echo "ok: no doc numbers the passes by hand"

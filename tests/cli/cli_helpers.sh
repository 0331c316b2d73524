# Sourced by the tests/cli/cli_*_test.sh scripts (`source "${0%/*}/cli_helpers.sh"`,
# the script's first argument still in $1): strict mode, $hostir (the binary,
# the first argument), and fail(), which counts a failed check without stopping,
# so one run reports every check that fails.
set -uo pipefail
hostir=$1
failures=0

fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# finish [MESSAGE]: exit 1 saying how many checks failed; else print MESSAGE
# (if given) and exit 0.
finish() {
  if ((failures)); then
    echo "$failures failure(s)"
    exit 1
  fi
  [[ -z ${1:-} ]] || echo "$1"
  exit 0
}

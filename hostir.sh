#!/usr/bin/env bash
# hostir's front door. On a fresh Debian 12 machine, as root:
#   ./hostir.sh demo [hostir args...]   install, build, run the main job
#   ./hostir.sh test                    install, build, run the whole test suite,
#                                       then the sanitizer job (as `sanitize`)
#   ./hostir.sh sanitize [--long]       the fuzzers and bad-input suites under ASan + UBSan
#   ./hostir.sh build | bench           build only | run the benchmarks
# Every step is idempotent: packages already installed and an up-to-date
# build are skipped.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(build-essential cmake ninja-build git libtorch-dev libgloo-dev python3-torch
          pybind11-dev python3-pytest libgtest-dev libgmock-dev libbenchmark-dev
          libopenblas0-openmp iproute2 libcli11-dev nlohmann-json3-dev python3-matplotlib
          openmpi-bin libopenmpi-dev libhalide14-0-dev libdnnl-dev llvm-15-tools libjemalloc2)
BUILD_DIR=${HOSTIR_BUILD_DIR:-build}
SANITIZE_BUILD_DIR=${HOSTIR_SANITIZE_BUILD_DIR:-build-sanitize}
JOBS=${HOSTIR_JOBS:-$(nproc)}

install_dependencies() {
  local missing=()
  for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "hostir: installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
  fi
}

build() {
  install_dependencies
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS"
  install_python_package
}

# The sanitizer job (docs/reliability.md, "AddressSanitizer and
# UndefinedBehaviorSanitizer"): the fuzzers and the bad-input suites built
# with ASan + UBSan in a folder of their own, the ctest label `sanitize` (a
# fixed-seed subset of the fuzzers); with --long also `sanitize_long`.
# `test` runs it after the Release suites.
sanitize_test() {
  local labels='^sanitize$' started=$SECONDS built status=0
  [[ ${1:-} == --long ]] && labels='^sanitize(_long)?$'
  cmake -S . -B "$SANITIZE_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHOSTIR_SANITIZE=address,undefined -DHOSTIR_BUILD_PYTHON=OFF \
    -DHOSTIR_BUILD_BENCHMARKS=OFF >/dev/null &&
    cmake --build "$SANITIZE_BUILD_DIR" -j "$JOBS" --target sanitize_tests || status=$?
  built=$SECONDS
  if ((status == 0)); then
    (cd "$SANITIZE_BUILD_DIR" && ctest --output-on-failure -j "$JOBS" --timeout 900 -L "$labels") ||
      status=$?
  fi
  echo "hostir: the sanitizer job took $((SECONDS - started)) s: build $((built - started)) s," \
    "tests $((SECONDS - built)) s"
  return $status
}

# `import hostir` from any directory with /usr/bin/python3: a .pth file in its
# site-packages names the package the build assembled in $BUILD_DIR/python
# (docs/python.md, "Installing").
install_python_package() {
  [[ -d "$BUILD_DIR/python/hostir" ]] || return 0
  local site target pth sudo=""
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  target="$(cd "$BUILD_DIR/python" && pwd)"
  pth="$site/hostir.pth"
  [[ -f "$pth" && "$(cat "$pth")" == "$target" ]] && return 0
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  echo "hostir: $pth -> $target"
  $sudo mkdir -p "$site"
  echo "$target" | $sudo tee "$pth" >/dev/null
}

# Root (or sudo) with ip netns and tc tbf available: the demo can emulate a link.
can_make_namespaces() {
  [[ $(id -u) -eq 0 ]] || return 1
  local probe=hostir_probe_$$
  ip netns add "$probe" 2>/dev/null || return 1
  local ok=0
  ip -n "$probe" link add hostir_p0 type veth peer name hostir_p1 2>/dev/null &&
    ip netns exec "$probe" tc qdisc add dev hostir_p0 root tbf rate 500mbit burst 2mbit \
      latency 100ms 2>/dev/null || ok=1
  ip netns del "$probe" 2>/dev/null || true
  return $ok
}

command=${1:-demo}
shift || true
case "$command" in
  demo)
    build
    if (($# == 0)) && can_make_namespaces; then
      # Overlap pays where the link is slower than memory: emulate one.
      echo "hostir: running the main job over an emulated ${DEMO_RATE:-500mbit} link" \
        "(two network namespaces, veth + tc tbf)"
      RATE=${DEMO_RATE:-500mbit} exec benchmarks/shaped_network_sp_mlp.sh "$BUILD_DIR" \
        --tokens 4096 --hidden 1024 --ffn 4096 --chunks 8,auto --baselines
    fi
    (($# == 0)) && echo "hostir: cannot create network namespaces here; running on loopback," \
      "where a transfer is a memory copy by the same cores, with auto chunking"
    exec "$BUILD_DIR/tools/hostir" "$@"
    ;;
  test)
    build
    status=0
    # Every pass of every pipeline is followed by the program verifier.
    export HOSTIR_VERIFY=1
    # On a machine without AVX-512 the plain suites already run the AVX2
    # paths: the label isa_avx2 (the suites again as on such a machine) would
    # repeat them.
    skip_avx2_leg=(); grep -qw avx512f /proc/cpuinfo || skip_avx2_leg=(-LE isa_avx2)
    (cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS" --timeout 600 "${skip_avx2_leg[@]}") ||
      status=$?
    # The Python suite after the C++ one; either failing fails the command.
    # The timeout catches a hang only: with an empty kernel cache the suite
    # took 989 s on a 2-core AVX2 machine (docs/reliability.md).
    HOSTIR_BUILD_DIR="$(cd "$BUILD_DIR" && pwd)" PYTHONPATH="$(cd "$BUILD_DIR" && pwd)/python" \
      timeout 1800 /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python || status=$?
    # Then the sanitizer job (ASan + UBSan, build-sanitize); its failure
    # fails the command too.
    sanitize_test || status=$?
    exit $status
    ;;
  sanitize)
    if (($# > 1)) || [[ $# == 1 && $1 != --long ]]; then
      echo "usage: $0 sanitize [--long]; got: $*" >&2
      exit 2
    fi
    install_dependencies
    sanitize_test "$@"
    ;;
  build)
    build
    ;;
  bench)
    build
    exec benchmarks/run_all.sh "$BUILD_DIR"
    ;;
  *)
    echo "usage: $0 {demo [args...]|test|sanitize [--long]|build|bench}" >&2
    exit 2
    ;;
esac

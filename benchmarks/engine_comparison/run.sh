#!/usr/bin/env bash
# Engine comparison for docs/kernels.md ("Why Halide"): the 100-op pointwise
# chain over 16M floats and row softmax over [4096, 1024], float32, symbolic
# sizes, 1 thread, in Halide 14 (JIT), LLVM 15 ORC (LLJIT) and MLIR 15
# (linalg -> LLVM, ExecutionEngine), against a
# plain C++ reference and the memory floor. Standalone: not part of the
# CMake build. Usage: benchmarks/engine_comparison/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS=${1:-7}
BUILD=${ENGINE_COMPARISON_BUILD:-$PWD/build}
mkdir -p "$BUILD"

need() {
  if ! dpkg -s "$1" >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y "$1"; else sudo apt-get install -y "$1"; fi
  fi
}
need g++
need libhalide14-0-dev
need llvm-15-dev
need libmlir-15-dev
need mlir-15-tools

# -ffp-contract=off: the reference rounds each op (no FMA), like the strict kernels.
CXX="g++ -std=c++17 -O2 -ffp-contract=off"
LLVM_CXXFLAGS=$(/usr/lib/llvm-15/bin/llvm-config --cxxflags | sed 's/-std=c++14//;s/-fno-exceptions//')
$CXX -march=native -O3 -o "$BUILD/bench_cpp" bench_cpp.cpp &
$CXX -I/usr/include/halide14 -o "$BUILD/bench_halide" bench_halide.cpp -lHalide14 -lpthread -ldl &
$CXX $LLVM_CXXFLAGS -o "$BUILD/bench_llvm" bench_llvm.cpp \
  -L/usr/lib/llvm-15/lib -Wl,-rpath,/usr/lib/llvm-15/lib -lLLVM-15 &
wait
$CXX $LLVM_CXXFLAGS -o "$BUILD/bench_mlir" bench_mlir.cpp \
  -L/usr/lib/llvm-15/lib -Wl,-rpath,/usr/lib/llvm-15/lib -lMLIR -lLLVM-15

export HL_NUM_THREADS=1 OMP_NUM_THREADS=1
LOG="$BUILD/results.txt"
{
  echo "# machine: $(lscpu | grep 'Model name' | sed 's/ \+/ /g'), $(nproc --all) cores," \
    "$(grep -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "# uptime before: $(uptime)"
  # Compile latency: 3 fresh compiles in one process per engine.
  "$BUILD/bench_halide" compile
  "$BUILD/bench_llvm" compile
  "$BUILD/bench_mlir" compile
  # Kernel time: one sample per kernel per process, rounds interleaved.
  for r in $(seq "$ROUNDS"); do
    "$BUILD/bench_cpp" run
    "$BUILD/bench_halide" run
    "$BUILD/bench_llvm" run
    "$BUILD/bench_mlir" run
  done
  echo "# uptime after: $(uptime)"
  for f in bench_halide.cpp bench_llvm.cpp bench_mlir.cpp; do
    echo "loc $f $(sed -n '/BEGIN kernel construction/,/END kernel construction/p' "$f" |
      grep -v -E '^\s*(//.*)?$' | wc -l)"
  done
} | tee "$LOG"
/usr/bin/python3 summarize.py "$LOG"

# Sourced by the benchmark harnesses that run torch baselines beside hostir
# (issue 39: overlap/run.sh, overlap/train_step.sh) and by
# shaped_network_sp_mlp.sh (sp-mlp --baselines' `compute only (ATen)`).
# Some machines export OPENBLAS_CORETYPE=Haswell (and OPENBLAS_L2_SIZE) to
# every shell. On an AVX-512 CPU that pins OpenBLAS, which runs the torch
# baselines' GEMMs, to its AVX2 Haswell kernels while hostir's GEMMs run
# oneDNN's AVX-512 ones: a handicapped baseline that flattered hostir's
# training-step ratios (docs/performance.md, "Training steps against
# hand-written torch.distributed steps").

# blas_kernels_match_the_leg [CPUINFO]: makes OpenBLAS's kernels match the ISA
# this run measures. CPUINFO (default /proc/cpuinfo) says whether the CPU has
# AVX-512 (avx512f).
# - The AVX2 leg (ATEN_CPU_CAPABILITY=avx2, as docs/performance.md's AVX2
#   sections and tests/CMakeLists.txt's isa_avx2 environment set it, with
#   HOSTIR_TARGET=cpu:avx2 and DNNL_MAX_CPU_ISA=AVX2): OPENBLAS_CORETYPE is
#   kept, or set to Haswell where unset, since there AVX2 kernels are the ISA
#   being emulated, for both sides alike.
# - An AVX-512 CPU otherwise: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are
#   dropped, so OpenBLAS picks its kernels and blocking for this CPU (Debian's
#   OpenBLAS 0.3.21 does not read OPENBLAS_L2_SIZE; another build may).
# - A CPU without AVX-512: left as inherited (a Haswell pin matches it).
# Says on stderr what it changed. Every process the harness starts inherits it.
blas_kernels_match_the_leg() {
  local cpuinfo=${1:-/proc/cpuinfo}
  if [[ ${ATEN_CPU_CAPABILITY:-} == [Aa][Vv][Xx]2 ]]; then
    if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
      export OPENBLAS_CORETYPE=Haswell
      echo "blas: the AVX2 leg (ATEN_CPU_CAPABILITY=avx2): set OPENBLAS_CORETYPE=Haswell" >&2
    fi
  elif grep -qw avx512f "$cpuinfo" 2>/dev/null; then
    if [[ -n ${OPENBLAS_CORETYPE:-}${OPENBLAS_L2_SIZE:-} ]]; then
      echo "blas: an AVX-512 CPU, not the AVX2 leg: dropped" \
        "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-}" \
        "(OpenBLAS picks its own kernels)" >&2
    fi
    unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
  fi
}

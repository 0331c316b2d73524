# Sourced by the benchmark harnesses that start both sides' ranks themselves
# (overlap/run.sh, overlap/train_step.sh, shaped_network_sp_mlp.sh), after
# blas_kernels.sh. Which malloc the ranks run on changes both sides: torch's
# Megatron-style training steps took 0.72-0.81x as long on jemalloc as on
# glibc's malloc (docs/performance.md, "jemalloc for ranks whose lengths
# change"), so a baseline on the slower one is a handicapped baseline.

# rank_malloc_for_both_sides HOSTIR: with HOSTIR_MALLOC set, exports the
# LD_PRELOAD and MALLOC_CONF that `HOSTIR launch` gives its ranks for it, so
# every rank of either side the harness starts inherits them; the launcher
# decides (finds jemalloc, checks the value, fails naming the variable), so
# the harnesses and hostir's own ranks cannot drift apart. Unset: nothing.
# Says on stderr what it set.
rank_malloc_for_both_sides() {
  local hostir=$1 given
  [[ -n ${HOSTIR_MALLOC:-} ]] || return 0
  given=$("$hostir" launch -n 1 -- sh -c \
    'echo "preload=${LD_PRELOAD-}"; echo "conf=${MALLOC_CONF-}"') || return 1
  local preload conf
  preload=$(sed -n 's/^\[rank 0\] preload=//p' <<<"$given")
  conf=$(sed -n 's/^\[rank 0\] conf=//p' <<<"$given")
  if [[ -n $preload ]]; then
    export LD_PRELOAD=$preload
  fi
  if [[ -n $conf ]]; then
    export MALLOC_CONF=$conf
  fi
  echo "malloc: both sides' ranks as \`hostir launch\` starts them with" \
    "HOSTIR_MALLOC=$HOSTIR_MALLOC (LD_PRELOAD=${LD_PRELOAD-} MALLOC_CONF=${MALLOC_CONF-})" >&2
}

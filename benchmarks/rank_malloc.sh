# Sourced by the benchmark harnesses that start both sides' ranks themselves
# (overlap/run.sh, overlap/train_step.sh, shaped_network_sp_mlp.sh), after
# blas_kernels.sh. Which malloc the ranks run on changes both sides: torch's
# Megatron-style training steps took 0.72-0.81x as long on jemalloc as on
# glibc's malloc (docs/performance.md, "jemalloc for ranks whose lengths
# change"), so a baseline on the slower one is a handicapped baseline.

# rank_malloc_for_both_sides: with HOSTIR_MALLOC=jemalloc, exports what
# `hostir launch` gives its ranks then (Debian's libjemalloc.so.2 in
# LD_PRELOAD, after the user's; MALLOC_CONF unless set), so every rank of
# either side the harness starts inherits it; with system or unset, nothing.
# Another value, or jemalloc not in the loader's cache, fails naming the
# variable. Says on stderr what it set.
rank_malloc_for_both_sides() {
  case ${HOSTIR_MALLOC:-system} in
    system) return 0 ;;
    jemalloc) ;;
    *)
      echo "malloc: HOSTIR_MALLOC='${HOSTIR_MALLOC}' is not system or jemalloc" >&2
      return 1
      ;;
  esac
  local library
  library=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libjemalloc.so.2" {print $NF; exit}')
  if [[ -z $library ]]; then
    echo "malloc: HOSTIR_MALLOC=jemalloc, but libjemalloc.so.2 is not in the loader's cache;" \
      "install Debian's libjemalloc2 or unset HOSTIR_MALLOC" >&2
    return 1
  fi
  export LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$library
  export MALLOC_CONF=${MALLOC_CONF:-dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always}
  echo "malloc: both sides' ranks on jemalloc (LD_PRELOAD=$LD_PRELOAD MALLOC_CONF=$MALLOC_CONF)" >&2
}

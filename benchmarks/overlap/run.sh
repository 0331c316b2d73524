#!/usr/bin/env bash
# Overlap benchmark: hostir's sp-mlp block against a hand-written
# torch.distributed (Gloo) version of the same block, side by side, on 2 ranks
# joined by links of several rates. See benchmarks/overlap/README.md.
#
#   sudo benchmarks/overlap/run.sh [BUILD_DIR] [--rates 200mbit,500mbit,1gbit,loopback]
#        [--tokens 4096 --hidden 1024 --ffn 4096 | --demo-sizes] [--runs 5] [--out DIR]
#        [--chunks LIST] [--torch-chunks LIST] [--streams K] [--threads N]
#        [--timeout SEC] [--no-timeline] [--no-hostir] [--no-torch]
#        [--layer [--heads 16] [--rounds 2]]
#
# --layer: the whole transformer layer instead (hostir sp-layer against
# torch_sp_layer.py), default sizes 2048/1024/4096 with 16 heads, rates
# 500mbit,loopback, results in benchmarks/overlap/results_layer.
#
# A rate R other than "loopback" places each rank in its own network namespace
# (hostir_ov0/1, addresses 10.213.1.1-2 only inside them) joined by a veth pair
# whose both ends are shaped with `tc qdisc ... tbf rate R`; "loopback" runs
# both ranks on 127.0.0.1 of the host, unshaped. The namespaces are removed on
# exit. Every child runs under `timeout`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
torch_python=/usr/bin/python3

usage() {
  sed -n '6,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<'EOF'
  --rates LIST       link rates (tc tbf syntax) and/or "loopback" (default all four:
                     200mbit,500mbit,1gbit,loopback)
  --tokens/--hidden/--ffn   block sizes S, H, F (default 4096/1024/4096)
  --demo-sizes       the demo's sizes 1024/512/2048
  --runs R           timed runs per program, medians reported (default 5, at least 5
                     recommended)
  --out DIR          results folder (default benchmarks/overlap/results)
  --chunks LIST      hostir chunk counts (default: those of 1,2,4,8,16 that divide
                     S/2, then auto)
  --torch-chunks LIST  torch chunk counts, each run one-ahead and all-ahead (default 2,4,8,16)
  --streams K        hostir --streams (default: hostir's own default)
  --threads N        torch.set_num_threads per torch rank (default 1)
  --timeout SEC      limit of each child process (default 1200)
  --burst B / --latency L   tbf burst (default 2mbit: whole GSO packets, see shaped_link.sh) and latency (default 100ms)
  --no-timeline      skip the traced hostir run and its timeline PNG
  --no-hostir / --no-torch  run only one side
  --layer            the transformer layer: `hostir sp-layer` against torch_sp_layer.py
                     (defaults: --tokens 2048 --hidden 1024 --heads 16 --ffn 4096,
                     --rates 500mbit,loopback, --out benchmarks/overlap/results_layer)
  --heads N          attention heads of the layer (default 16; --layer only)
  --rounds N         --layer only: N rounds per link of one hostir and one torch run each,
                     alternating which goes first; the report pools their runs (default 2)
EOF
}

die() { echo "run.sh: $*" >&2; exit 2; }

build=build
rates="" tokens="" hidden="" ffn="" out=""
runs=5
layer=0 heads=16 rounds=2
chunks="" torch_chunks="" streams="" threads=1 child_timeout=1200
burst=2mbit latency=100ms
do_timeline=1 do_hostir=1 do_torch=1
if [[ $# -gt 0 && $1 != --* ]]; then build=$1; shift; fi
while [[ $# -gt 0 ]]; do
  case $1 in
    --rates) rates=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --hidden) hidden=$2; shift 2 ;;
    --ffn) ffn=$2; shift 2 ;;
    --demo-sizes) tokens=1024 hidden=512 ffn=2048; shift ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --chunks) chunks=$2; shift 2 ;;
    --torch-chunks) torch_chunks=$2; shift 2 ;;
    --streams) streams=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --timeout) child_timeout=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --latency) latency=$2; shift 2 ;;
    --no-timeline) do_timeline=0; shift ;;
    --no-hostir) do_hostir=0; do_timeline=0; shift ;;
    --no-torch) do_torch=0; shift ;;
    --layer) layer=1; shift ;;
    --heads) heads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
if (( layer )); then
  : "${rates:=500mbit,loopback}" "${tokens:=2048}" "${hidden:=1024}" "${ffn:=4096}"
  : "${out:=$here/results_layer}"
else
  : "${rates:=200mbit,500mbit,1gbit,loopback}" "${tokens:=4096}" "${hidden:=1024}"
  : "${ffn:=4096}" "${out:=$here/results}"
fi
for v in tokens hidden ffn runs threads child_timeout heads rounds; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v//_/-} needs a positive integer, got '${!v}'"
done
[[ -z $streams || $streams =~ ^[1-9][0-9]*$ ]] || die "--streams needs a positive integer"
(( tokens % 2 == 0 && ffn % 2 == 0 )) || die "--tokens and --ffn must be even (2 ranks)"
if (( layer )); then
  (( heads % 2 == 0 && hidden % heads == 0 )) ||
    die "--heads must be even (2 ranks) and divide --hidden"
fi
(( runs >= 5 )) || echo "run.sh: warning: --runs $runs < 5" >&2

# Default chunk lists: the counts of 1,2,4,8,16 that divide each rank's rows.
if [[ -z $chunks ]]; then
  for c in 1 2 4 8 16; do (( (tokens / 2) % c == 0 )) && chunks+="$c,"; done
  chunks+=auto
fi
fixed_chunks=$(tr ',' '\n' <<<"$chunks" | grep -E '^[0-9]+$' | paste -sd, -)
[[ -n $torch_chunks ]] || torch_chunks=2,4,8,16

IFS=, read -r -a rate_list <<<"$rates"
shaped=0
for r in "${rate_list[@]}"; do
  [[ $r == loopback ]] || shaped=1
done

# ---- checks: root, namespaces, binaries ------------------------------------
[[ $(id -u) -eq 0 ]] || die "must run as root (it creates network namespaces and tc qdiscs): sudo $0 ..."
link_ns=(hostir_ov0 hostir_ov1)
link_dev=(hostir_ovveth0 hostir_ovveth1)
link_addr=(10.213.1.1 10.213.1.2)
source "$repo/benchmarks/shaped_link.sh"
# OpenBLAS unpinned on an AVX-512 CPU, Haswell on the AVX2 leg: both sides'
# GEMMs at the ISA this run measures (blas_kernels.sh).
source "$repo/benchmarks/blas_kernels.sh"
blas_kernels_match_the_leg
source "$repo/benchmarks/rank_malloc.sh"
rank_malloc_for_both_sides "$build/tools/hostir"
if (( shaped )); then
  { command -v ip && command -v tc; } >/dev/null || die "needs ip and tc (iproute2)"
  probe=hostir_ovprobe$$
  if ! ip netns add "$probe" 2>/dev/null; then
    die "'ip netns add' is not permitted here; run the loopback rate only: --rates loopback"
  fi
  ip netns del "$probe"
fi
hostir=$build/tools/hostir
# A relative BUILD_DIR is taken from the current folder, else from the repo root.
[[ -x $hostir || $build == /* || ! -x $repo/$build/tools/hostir ]] || hostir=$repo/$build/tools/hostir
if (( do_hostir )); then
  [[ -x $hostir ]] || die "no hostir binary at '$hostir' (build first: ./hostir.sh build, or pass BUILD_DIR)"
  hostir=$(cd "$(dirname "$hostir")" && pwd)/hostir
fi
if (( do_torch )); then
  "$torch_python" -c 'import torch, torch.distributed' 2>/dev/null ||
    die "$torch_python cannot import torch (Debian: apt-get install python3-torch)"
fi
if (( do_timeline )); then
  "$torch_python" -c 'import matplotlib' 2>/dev/null || {
    echo "run.sh: $torch_python lacks matplotlib (apt-get install python3-matplotlib): no timeline" >&2
    do_timeline=0
  }
fi
command -v timeout >/dev/null || die "needs timeout (coreutils)"

mkdir -p "$out"/raw "$out"/logs "$out"/traces
out=$(cd "$out" && pwd)

# ---- network ---------------------------------------------------------------
port=29700
active=()  # pids of the ranks running now, stopped on exit
cleanup() {
  local p
  for p in "${active[@]}"; do kill "$p" 2>/dev/null || true; done
  shaped_link_down
}
# launch NAME RATE CMD...: runs CMD as rank 0 and rank 1 (env set here), logs
# to $out/logs/NAME.rankN.log; fails if either rank fails or times out, and
# then stops the other rank rather than let it wait for its peer.
launch() {
  local name=$1 rate=$2; shift 2
  port=$((port + 1))
  local status=0 i
  declare -A rank_of=()
  active=()
  for i in 0 1; do
    local master ifname prefix=()
    if [[ $rate == loopback ]]; then
      master=127.0.0.1 ifname=lo
    else
      master=${link_addr[0]} ifname=${link_dev[$i]}
      prefix=(ip netns exec "${link_ns[$i]}")
    fi
    # Both ranks share this machine's cores: LOCAL_WORLD_SIZE=2 gives each
    # hostir rank half of them (its thread budget), as torch gets --threads.
    "${prefix[@]}" env RANK=$i WORLD_SIZE=2 LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 \
      MASTER_ADDR="$master" MASTER_PORT=$port GLOO_SOCKET_IFNAME="$ifname" \
      timeout -k 10 "$child_timeout" "$@" >"$out/logs/$name.rank$i.log" 2>&1 &
    active+=($!)
    rank_of[$!]=$i
  done
  local waiting=("${active[@]}") done_pid rc p
  while (( ${#waiting[@]} > 0 )); do
    rc=0
    wait -n -p done_pid "${waiting[@]}" || rc=$?
    i=${rank_of[$done_pid]}
    local still=()
    for p in "${waiting[@]}"; do [[ $p == "$done_pid" ]] || still+=("$p"); done
    waiting=("${still[@]}")
    if (( rc != 0 )); then
      if (( status == 0 )); then
        echo "  $name rank $i failed (exit $rc$( ((rc == 124)) && echo ", timed out after ${child_timeout}s")); last lines of $out/logs/$name.rank$i.log:" >&2
        tail -n 5 "$out/logs/$name.rank$i.log" | sed 's/^/    /' >&2
      fi
      status=1
      for p in "${waiting[@]}"; do kill "$p" 2>/dev/null || true; done
    fi
  done
  active=()
  return $status
}

best_fixed_chunks() {  # best_fixed_chunks JSON: the fixed chunk count with the lowest median
  "$torch_python" - "$1" <<'EOF'
import json, sys
progs = json.load(open(sys.argv[1]))["programs"]
fixed = [p for p in progs if p.get("name") == "pipelined" and "median_ms" in p]
print(min(fixed, key=lambda p: p["median_ms"])["chunks"] if fixed else "")
EOF
}

trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- runs --------------------------------------------------------------------
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
{
  if (( layer )); then
    echo "command: $0 $build --layer --rates $rates --tokens $tokens --hidden $hidden --heads $heads --ffn $ffn --runs $runs --rounds $rounds --chunks $chunks --torch-chunks $torch_chunks --threads $threads${streams:+ --streams $streams}"
  else
    echo "command: $0 $build --rates $rates --tokens $tokens --hidden $hidden --ffn $ffn --runs $runs --chunks $chunks --torch-chunks $torch_chunks --threads $threads${streams:+ --streams $streams}"
  fi
  echo "started: $started"
  echo "host: $(uname -srm), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/logs/run.txt"
stream_flag=()
[[ -n $streams ]] && stream_flag=(--streams "$streams")
(( shaped )) && shaped_link_up
failures=0

# link_probe TAG RATE BYTES: what this link carries with both directions busy,
# for a program's bytes (per rank, each way: for each allgather + reduce-scatter
# pair, its allgather shard and its reduce-scatter half).
link_probe() {
  echo "  duplex_link.py --bytes $3"
  launch "link_$1" "$2" "$torch_python" "$here/duplex_link.py" --bytes "$3" --runs "$runs" \
    --json "$out/raw/link_$1.json"
}

# ---- the transformer layer (--layer) -------------------------------------------
layer_hostir() {  # layer_hostir TAG RATE ROUND
  echo "  round $3: hostir sp-layer --chunks $chunks"
  launch "hostir_layer_$1.r$3" "$2" "$hostir" sp-layer --tokens "$tokens" --hidden "$hidden" \
    --heads "$heads" --ffn "$ffn" --chunks "$chunks" --runs "$runs" "${stream_flag[@]}" \
    --baselines --link "$2" --json "$out/raw/hostir_layer_$1.r$3.json"
}
layer_torch() {  # layer_torch TAG RATE ROUND
  echo "  round $3: torch_sp_layer.py --chunks $torch_chunks --threads $threads"
  launch "torch_layer_$1.r$3" "$2" "$torch_python" "$here/torch_sp_layer.py" \
    --tokens "$tokens" --hidden "$hidden" --heads "$heads" --ffn "$ffn" \
    --chunks "$torch_chunks" --runs "$runs" --threads "$threads" --timeout "$child_timeout" \
    --json "$out/raw/torch_layer_$1.r$3.json"
}
if (( layer )); then
  for rate in "${rate_list[@]}"; do
    echo "== link $rate"
    [[ $rate == loopback ]] || shaped_link_rate "$rate" "$burst" "$latency"
    tag=${rate//[^A-Za-z0-9]/_}
    rm -f "$out/raw/hostir_layer_$tag".json "$out/raw/hostir_layer_$tag".r*.json \
      "$out/raw/torch_layer_$tag".json "$out/raw/torch_layer_$tag".r*.json \
      "$out/raw/link_$tag.json" "$out/traces/hostir_layer_$tag".rank*.json
    link_probe "$tag" "$rate" $((2 * tokens * hidden * 4)) || failures=$((failures + 1))
    # Rounds alternate which side goes first (hostir, torch, torch, hostir, ...),
    # so a drift of the machine's load between them hits both alike.
    for ((round = 1; round <= rounds; round++)); do
      order=(hostir torch)
      (( round % 2 == 0 )) && order=(torch hostir)
      for side in "${order[@]}"; do
        if [[ $side == hostir ]] && (( do_hostir )); then
          layer_hostir "$tag" "$rate" "$round" || failures=$((failures + 1))
        elif [[ $side == torch ]] && (( do_torch )); then
          layer_torch "$tag" "$rate" "$round" || failures=$((failures + 1))
        fi
      done
    done
    if (( do_timeline )) && [[ -s $out/raw/hostir_layer_$tag.r1.json ]]; then
      c=$(best_fixed_chunks "$out/raw/hostir_layer_$tag.r1.json" || true)
      c=${c:-${fixed_chunks%%,*}}
      if [[ -n $c ]]; then
        echo "  hostir sp-layer --chunks $c --runs 1 --trace (timeline)"
        if launch "hostir_layer_trace_$tag" "$rate" "$hostir" sp-layer --tokens "$tokens" \
            --hidden "$hidden" --heads "$heads" --ffn "$ffn" --chunks "$c" --runs 1 \
            "${stream_flag[@]}" --json "$out/raw/hostir_layer_trace_$tag.json" \
            --trace "$out/traces/hostir_layer_$tag"; then
          timeout 300 "$torch_python" "$here/timeline.py" "$out/traces/hostir_layer_$tag" \
            "$out/timeline_layer_$tag.png" \
            --title "hostir sp-layer, both halves pipelined in $c chunks, link $rate" ||
            echo "  timeline failed" >&2
        fi
      fi
    fi
  done
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/logs/run.txt"
  "$torch_python" "$here/report.py" "$out" --layer --rates "$rates" \
    --run-info "$out/logs/run.txt" --config "$tokens,$hidden,$ffn,$runs,$heads"
  if (( failures )); then
    echo "run.sh: $failures program run(s) failed; see $out/logs" >&2
    exit 1
  fi
  exit 0
fi

for rate in "${rate_list[@]}"; do
  echo "== link $rate"
  [[ $rate == loopback ]] || shaped_link_rate "$rate" "$burst" "$latency"
  tag=${rate//[^A-Za-z0-9]/_}
  rm -f "$out/raw/hostir_$tag.json" "$out/raw/torch_$tag.json" "$out/raw/link_$tag.json" \
    "$out/traces/hostir_$tag".rank*.json
  link_probe "$tag" "$rate" $((tokens * hidden * 4)) || failures=$((failures + 1))
  if (( do_hostir )); then
    echo "  hostir sp-mlp --chunks $chunks"
    launch "hostir_$tag" "$rate" "$hostir" sp-mlp --tokens "$tokens" --hidden "$hidden" \
      --ffn "$ffn" --chunks "$chunks" --runs "$runs" "${stream_flag[@]}" --baselines \
      --link "$rate" --json "$out/raw/hostir_$tag.json" || failures=$((failures + 1))
  fi
  if (( do_torch )); then
    echo "  torch_sp_mlp.py --chunks $torch_chunks --threads $threads"
    launch "torch_$tag" "$rate" "$torch_python" "$here/torch_sp_mlp.py" --tokens "$tokens" \
      --hidden "$hidden" --ffn "$ffn" --chunks "$torch_chunks" --runs "$runs" \
      --threads "$threads" --timeout "$child_timeout" --json "$out/raw/torch_$tag.json" ||
      failures=$((failures + 1))
  fi
  if (( do_timeline )) && [[ -s $out/raw/hostir_$tag.json ]]; then
    c=$(best_fixed_chunks "$out/raw/hostir_$tag.json" || true)
    c=${c:-${fixed_chunks%%,*}}
    if [[ -n $c ]]; then
      echo "  hostir sp-mlp --chunks $c --runs 1 --trace (timeline)"
      if launch "hostir_trace_$tag" "$rate" "$hostir" sp-mlp --tokens "$tokens" \
          --hidden "$hidden" --ffn "$ffn" --chunks "$c" --runs 1 "${stream_flag[@]}" \
          --json "$out/raw/hostir_trace_$tag.json" --trace "$out/traces/hostir_$tag"; then
        timeout 300 "$torch_python" "$here/timeline.py" "$out/traces/hostir_$tag" \
          "$out/timeline_$tag.png" --title "hostir sp-mlp pipelined, $c chunks, link $rate" ||
          echo "  timeline failed" >&2
      fi
    fi
  fi
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/logs/run.txt"

"$torch_python" "$here/report.py" "$out" --rates "$rates" --run-info "$out/logs/run.txt" \
  --config "$tokens,$hidden,$ffn,$runs"
if (( failures )); then
  echo "run.sh: $failures program run(s) failed; see $out/logs" >&2
  exit 1
fi

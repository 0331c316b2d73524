"""Counts the threads' voluntary context switches (each a sleep and a wake-up)
that one more Stream chunk adds to hostir's pipelined MLP block, 2 ranks on
loopback: the chunk model (runtime/comm/chunk_choice.h) prices
kWakesPerCollective wake-ups per collective, an estimate this measures.
getrusage of the finished process tree, between --runs 5 and --runs 45 of
the same chunk count, so start-up and the unchunked program cancel.

    /usr/bin/python3 benchmarks/count_wakeups_per_chunk.py [HOSTIR_BINARY]
"""

import os
import subprocess
import sys

BINARY = sys.argv[1] if len(sys.argv) > 1 else "build/tools/hostir"


def context_switches(chunks, runs):
    command = [BINARY, "sp-mlp", "--ranks", "2", "--tokens", "1024", "--hidden", "256",
               "--ffn", "1024", "--chunks", str(chunks), "--runs", str(runs)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit(f"{' '.join(command)} failed ({status})")
    return usage.ru_nvcsw, usage.ru_nivcsw


def main():
    per_run = {}
    for chunks in [1, 2, 4, 8, 16]:
        few, many = context_switches(chunks, 5), context_switches(chunks, 45)
        per_run[chunks] = (many[0] - few[0]) / 40
        print(f"{chunks:2d} chunks: voluntary switches per run {per_run[chunks]:7.1f}, "
              f"involuntary {(many[1] - few[1]) / 40:7.1f}", flush=True)
    per_chunk = (per_run[16] - per_run[1]) / 15 / 2  # per rank
    print(f"per extra chunk and rank: {per_chunk:.1f} voluntary switches "
          f"({per_chunk / 2:.1f} per collective: an allgather and a reduce-scatter a chunk)")


if __name__ == "__main__":
    main()

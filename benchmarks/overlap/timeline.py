#!/usr/bin/python3
"""Draws a timeline PNG from the Chrome-trace JSON files of a hostir run.

    timeline.py TRACE_PREFIX OUT.png [--title TEXT] [--per-rank-origin]

TRACE_PREFIX is what was given to `hostir sp-mlp --trace PREFIX`: the files
PREFIX.rank0.json, PREFIX.rank1.json, ... are read (a single trace file may be
given instead). One lane per (rank, tid); "ph":"X" events are coloured by
class: communication, compute, wait (light grey). The class is the event's
"cat" when it names one, else guessed from its name. Nested events in a lane
are drawn thinner on top of their parent. Time axis in ms from the earliest
event of all ranks (the ranks run on one machine, so their steady clocks
agree); --per-rank-origin starts each rank at its own first event.

Uses matplotlib with the Agg backend (Debian: python3-matplotlib).
"""

import argparse
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLORS = {"communication": "#e6780b", "compute": "#1f6fb4", "wait": "#c8c8c8"}
LABELS = {"compute": "compute", "communication": "communication", "wait": "wait / synchronize"}
COMM_WORDS = ("communication", "allgather", "reduce_scatter", "reducescatter", "in flight",
              "alltoall", "all_to_all", "allreduce", "all_reduce", "broadcast", "send", "recv",
              "barrier")


def classify(event):
    cat = str(event.get("cat", "")).lower()
    if cat.startswith("comm") or cat in ("collective", "network"):
        return "communication"
    if cat.startswith("wait") or cat.startswith("sync"):
        return "wait"
    if cat.startswith("compute") or cat in ("kernel", "gemm", "op"):
        return "compute"
    name = str(event.get("name", ""))
    lower = name.lower()
    if lower.startswith("wait") or lower.startswith("synchronize"):
        return "wait"
    if any(word in lower for word in COMM_WORDS):
        return "communication"
    return "compute"


def trace_files(prefix):
    if os.path.isfile(prefix) and not re.search(r"\.rank\d+\.json$", prefix):
        return [prefix]
    files = glob.glob(glob.escape(prefix) + ".rank*.json")
    if not files and os.path.isfile(prefix):
        files = [prefix]
    key = lambda f: int(re.search(r"\.rank(\d+)\.json$", f).group(1)) if re.search(
        r"\.rank(\d+)\.json$", f) else 0
    return sorted(files, key=key)


def load(files):
    """Returns (events, lane names): events are dicts with rank, tid, start, dur, cls, name."""
    events, thread_names, process_names = [], {}, {}
    for index, path in enumerate(files):
        with open(path) as f:
            data = json.load(f)
        rows = data["traceEvents"] if isinstance(data, dict) else data
        m = re.search(r"\.rank(\d+)\.json$", path)
        file_rank = int(m.group(1)) if m else index
        for e in rows:
            pid = e.get("pid", file_rank)
            if e.get("ph") == "M":
                name = (e.get("args") or {}).get("name")
                if e.get("name") == "thread_name" and name:
                    thread_names[(pid, e.get("tid", 0))] = str(name)
                elif e.get("name") == "process_name" and name:
                    process_names[pid] = str(name)
                continue
            if e.get("ph") != "X" or "ts" not in e:
                continue
            events.append({"rank": pid, "tid": e.get("tid", 0), "start": float(e["ts"]),
                           "dur": float(e.get("dur", 0.0)), "cls": classify(e),
                           "name": str(e.get("name", ""))})
    return events, thread_names, process_names


def union_length(intervals):
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def intersect_length(a, b):
    """Length of (union of a) intersected with (union of b)."""
    def merged(iv):
        out = []
        for s, e in sorted(iv):
            if out and s <= out[-1][1]:
                out[-1][1] = max(out[-1][1], e)
            else:
                out.append([s, e])
        return out
    a, b = merged(a), merged(b)
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("prefix")
    p.add_argument("out")
    p.add_argument("--title", default=None)
    p.add_argument("--per-rank-origin", action="store_true",
                   help="start each rank's time at its own first event")
    p.add_argument("--from-ms", type=float, default=None,
                   help="draw only events ending after this time (ms on the axis)")
    p.add_argument("--to-ms", type=float, default=None,
                   help="draw only events starting before this time (ms on the axis)")
    args = p.parse_args(argv)

    files = trace_files(args.prefix)
    if not files:
        print(f"timeline.py: no trace files {args.prefix}.rank*.json", file=sys.stderr)
        return 2
    events, thread_names, process_names = load(files)
    if not events:
        print(f"timeline.py: no complete ('ph':'X') events in {', '.join(files)}", file=sys.stderr)
        return 2

    origin = {}
    for e in events:
        key = e["rank"] if args.per_rank_origin else None
        origin[key] = min(origin.get(key, e["start"]), e["start"])
    for e in events:
        e["start"] -= origin[e["rank"] if args.per_rank_origin else None]

    lo = -1e300 if args.from_ms is None else args.from_ms * 1e3
    hi = 1e300 if args.to_ms is None else args.to_ms * 1e3
    events = [e for e in events if e["start"] + e["dur"] >= lo and e["start"] <= hi]
    if not events:
        print("timeline.py: no events in the requested window", file=sys.stderr)
        return 2
    # Events cut to the window, so busy/overlap figures are the window's.
    for e in events:
        s, t = max(e["start"], lo), min(e["start"] + e["dur"], hi)
        e["start"], e["dur"] = s, t - s

    lanes = sorted({(e["rank"], e["tid"]) for e in events},
                   key=lambda k: (str(type(k[0])), k[0], str(type(k[1])), k[1]))
    lane_index = {lane: i for i, lane in enumerate(lanes)}

    # Nesting depth within a lane: an event inside a still-open one is one deeper.
    by_lane = {}
    for e in events:
        by_lane.setdefault((e["rank"], e["tid"]), []).append(e)
    for lane_events in by_lane.values():
        lane_events.sort(key=lambda e: (e["start"], -e["dur"]))
        stack = []
        for e in lane_events:
            end = e["start"] + e["dur"]
            while stack and stack[-1] <= e["start"] + 1e-9:
                stack.pop()
            e["depth"] = len(stack)
            stack.append(end)

    t_min = min(e["start"] for e in events) / 1e3
    span_ms = max(e["start"] + e["dur"] for e in events) / 1e3  # end of the last event
    fig_h = 1.6 + 0.3 * len({e["rank"] for e in events}) + 0.5 * len(lanes)
    fig, ax = plt.subplots(figsize=(14, fig_h), dpi=110)
    for e in sorted(events, key=lambda e: e["depth"]):
        y = lane_index[(e["rank"], e["tid"])]
        h = 0.8 * (0.72 ** e["depth"])
        ax.broken_barh([(e["start"] / 1e3, max(e["dur"] / 1e3, (span_ms - t_min) * 1e-4))], (y - h / 2, h),
                       facecolors=COLORS[e["cls"]], edgecolors="white", linewidth=0.3,
                       zorder=2 + e["depth"])
    labels = []
    for rank, tid in lanes:
        tname = thread_names.get((rank, tid), f"tid {tid}")
        labels.append(f"rank {rank} · {tname}")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(labels, fontsize=9)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    x0 = t_min if args.from_ms is not None else 0.0
    ax.set_xlim(x0, span_ms + (span_ms - x0) * 0.01)
    ax.set_xlabel("time (ms)")
    ax.grid(axis="x", color="#e0e0e0", zorder=0)
    ax.set_axisbelow(True)
    for i in range(1, len(lanes)):
        if lanes[i][0] != lanes[i - 1][0]:
            ax.axhline(i - 0.5, color="black", linewidth=0.8)

    # Per rank: busy time of each class and how much communication was hidden.
    notes = []
    for rank in sorted({e["rank"] for e in events}, key=lambda r: (str(type(r)), r)):
        comm = [(e["start"], e["start"] + e["dur"]) for e in events
                if e["rank"] == rank and e["cls"] == "communication"]
        comp = [(e["start"], e["start"] + e["dur"]) for e in events
                if e["rank"] == rank and e["cls"] == "compute"]
        both = intersect_length(comm, comp)
        c = union_length(comm)
        notes.append(f"rank {rank}: compute {union_length(comp) / 1e3:.1f} ms, "
                     f"communication {c / 1e3:.1f} ms, overlapped {both / 1e3:.1f} ms"
                     + (f" ({100 * both / c:.0f}% of comm)" if c > 0 else ""))
    title = args.title or f"timeline of {os.path.basename(args.prefix)}"
    ax.set_title(title + "\n" + "\n".join(notes), fontsize=10)
    handles = [Patch(facecolor=COLORS[k], label=LABELS[k]) for k in ("compute", "communication",
                                                                     "wait")]
    fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.35 / fig_h, 1, 1))
    fig.savefig(args.out)
    print(f"wrote {args.out} ({len(events)} events, {len(lanes)} lanes, {span_ms:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""Builds the overlap benchmark's tables from the JSON files run.sh wrote.

    report.py OUT_DIR [--rates 200mbit,500mbit,1gbit,loopback] [--run-info FILE]

Reads OUT_DIR/raw/hostir_<rate>.json (hostir sp-mlp --json) and
OUT_DIR/raw/torch_<rate>.json (torch_sp_mlp.py --json), prints the tables as
Markdown and writes them to OUT_DIR/results.md, with everything combined in
OUT_DIR/summary.json. Without --rates, every rate found in OUT_DIR/raw is
reported.
"""

import argparse
import glob
import json
import os
import re
import sys


def tag(rate):
    return re.sub(r"[^A-Za-z0-9]", "_", rate)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ms(v):
    if v is None:
        return "—"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(v):
    return "—" if v is None else f"{v:.2f}"


def rate_key(rate):
    """Sorts link rates slowest first, loopback last."""
    m = re.fullmatch(r"([0-9.]+)([kmg]?)(bit|bps)?", rate.lower())
    if not m:
        return (1, 0.0, rate)
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    bits = float(m.group(1)) * scale * (8 if m.group(3) == "bps" else 1)
    return (0, bits, rate)


def hostir_summary(data):
    """The hostir figures of one rate, from hostir sp-mlp's JSON."""
    s = {"fixed": {}, "best": None, "auto": None, "unchunked": None, "comm": None,
         "compute": None, "checks_ok": True, "config": data.get("config", {}),
         "auto_info": data.get("auto")}
    for p in data.get("programs", []):
        name, med = p.get("name"), p.get("median_ms")
        if p.get("check") is False:
            s["checks_ok"] = False
        if name == "pipelined":
            s["fixed"][int(p["chunks"])] = med
        elif name == "pipelined-auto":
            s["auto"] = (med, p.get("chunks"))
        elif name == "unchunked":
            s["unchunked"] = med
        elif name in ("comm-only", "compute-only"):
            # Optionally one per chunk count ("chunks"); the plain entry (or
            # chunks 1) is the one of the formula's Tcomm / Tcomp.
            key = "comm_by_chunks" if name == "comm-only" else "compute_by_chunks"
            s.setdefault(key, {})[p.get("chunks")] = med
    for key, plain in (("comm_by_chunks", "comm"), ("compute_by_chunks", "compute")):
        by = s.get(key, {})
        s[plain] = by.get(None, by.get(1, next(iter(by.values()), None)))
    fixed = {c: m for c, m in s["fixed"].items() if m is not None}
    if fixed:
        c = min(fixed, key=fixed.get)
        s["best"] = (fixed[c], c)
    return s


def ideal_fraction(t_serial, t_pipe, t_comm, t_comp):
    """(Tserial - Tpipelined) / (Tserial - max(Tcomm, Tcomp))."""
    if None in (t_serial, t_pipe, t_comm, t_comp):
        return None
    gain = t_serial - max(t_comm, t_comp)
    if gain <= 0:
        return None
    return (t_serial - t_pipe) / gain


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--rates", default=None)
    p.add_argument("--run-info", default=None, help="text put at the top of results.md")
    p.add_argument("--config", default=None,
                   help="tokens,hidden,ffn,runs: used where no JSON file gives them")
    args = p.parse_args(argv)
    raw = os.path.join(args.out, "raw")

    if args.rates:
        rates = [r for r in args.rates.split(",") if r]
    else:
        found = set()
        for f in glob.glob(os.path.join(raw, "*.json")):
            m = re.fullmatch(r"(hostir|torch)_(.+)\.json", os.path.basename(f))
            if m and not m.group(2).startswith("trace_"):
                found.add(m.group(2))
        rates = sorted(found, key=rate_key)
    if not rates:
        print(f"report.py: no results in {raw}", file=sys.stderr)
        return 2

    rows, notes, summary = [], [], {}
    all_fixed = set()
    config = {}
    torch_threads = set()
    for rate in rates:
        h_data = load(os.path.join(raw, f"hostir_{tag(rate)}.json"))
        t_data = load(os.path.join(raw, f"torch_{tag(rate)}.json"))
        h = hostir_summary(h_data) if h_data else None
        if h:
            all_fixed |= set(h["fixed"])
            config = config or h["config"]
        if t_data:
            torch_threads.add(t_data.get("config", {}).get("threads"))
            config = config or t_data.get("config", {})
        rows.append((rate, h, t_data))
        if h_data is None:
            notes.append(f"{rate}: no hostir result (see logs/hostir_{tag(rate)}.rank*.log)")
        elif not h["checks_ok"]:
            notes.append(f"{rate}: a hostir program FAILED its check against ATen")
        if t_data is None:
            notes.append(f"{rate}: no torch result (see logs/torch_{tag(rate)}.rank*.log)")
        elif not t_data.get("check", False):
            notes.append(f"{rate}: the torch version FAILED its check")
        if h and h["auto_info"]:
            a = h["auto_info"]
            inputs = ", ".join(f"{k} {v:.4g}" if isinstance(v, (int, float)) else f"{k} {v}"
                               for k, v in (a.get("inputs") or {}).items())
            notes.append(f"{rate}: auto chose {a.get('chunks')} chunks: {a.get('reason', '')}"
                         + (f" ({inputs})" if inputs else ""))

    fixed_cols = sorted(all_fixed)
    # Table 1: medians.
    head = (["link", "hostir pipelined best (C)"] + [f"hostir C={c}" for c in fixed_cols]
            + ["hostir auto (C)", "hostir unchunked", "comm-only", "compute-only",
               "torch serial", "torch pipelined best (C, schedule)"])
    times = []
    for rate, h, t in rows:
        r = [rate]
        if h:
            r.append(f"{ms(h['best'][0])} ({h['best'][1]})" if h["best"] else "—")
            r += [ms(h["fixed"].get(c)) for c in fixed_cols]
            r.append(f"{ms(h['auto'][0])} ({h['auto'][1]})" if h["auto"] else "—")
            r += [ms(h["unchunked"]), ms(h["comm"]), ms(h["compute"])]
        else:
            r += ["—"] * (1 + len(fixed_cols) + 4)
        if t:
            r += [ms(t.get("serial_ms")),
                  f"{ms(t.get('pipelined_ms'))} ({t.get('chunks')}, "
                  f"{t.get('schedule', 'one-ahead')})"]
        else:
            r += ["—", "—"]
        times.append(r)

    # Table 2: ratios.
    head2 = ["link", "hostir pipelined / torch pipelined", "hostir pipelined / hostir unchunked",
             "auto / best fixed", "fraction of ideal gain (best fixed)",
             "fraction of ideal gain (auto)", "hostir unchunked / torch serial",
             "torch pipelined / torch serial"]
    ratios = []
    for rate, h, t in rows:
        best = h["best"][0] if h and h["best"] else None
        auto = h["auto"][0] if h and h["auto"] else None
        unch = h["unchunked"] if h else None
        comm = h["comm"] if h else None
        comp = h["compute"] if h else None
        t_pipe = t.get("pipelined_ms") if t else None
        t_ser = t.get("serial_ms") if t else None
        vals = {
            "hostir_pipelined_over_torch_pipelined": ratio(best, t_pipe),
            "hostir_pipelined_over_hostir_unchunked": ratio(best, unch),
            "auto_over_best_fixed": ratio(auto, best),
            "ideal_gain_fraction_best": ideal_fraction(unch, best, comm, comp),
            "ideal_gain_fraction_auto": ideal_fraction(unch, auto, comm, comp),
            "hostir_unchunked_over_torch_serial": ratio(unch, t_ser),
            "torch_pipelined_over_torch_serial": ratio(t_pipe, t_ser),
        }
        ratios.append([rate] + [fmt_ratio(v) for v in vals.values()])
        summary[rate] = {"hostir": h, "torch": t, "ratios": vals}

    # Table 3: torch per chunk count, with its own compute-only / comm-only.
    head3 = ["link", "C", "torch pipelined", "torch compute-only", "torch comm-only",
             "pipelined / serial", "fraction of ideal gain (same C)"]
    torch_rows = []
    for rate, _, t in rows:
        if not t:
            continue
        bd = t.get("breakdown", {})
        ser = t.get("serial_ms")
        b1 = bd.get("1", {})
        torch_rows.append([rate, "serial", ms(ser), ms(b1.get("compute_only_ms")),
                           ms(b1.get("comm_only_ms")), "1.00", "—"])
        for p in t.get("pipelined", []):
            b = bd.get(str(p["chunks"]), {})
            label = f'{p["chunks"]} ({p.get("schedule", "one-ahead")})'
            torch_rows.append([rate, label, ms(p["median_ms"]),
                               ms(b.get("compute_only_ms")), ms(b.get("comm_only_ms")),
                               fmt_ratio(ratio(p["median_ms"], ser)),
                               fmt_ratio(ideal_fraction(ser, p["median_ms"],
                                                        b.get("comm_only_ms"),
                                                        b.get("compute_only_ms")))])

    def table(header, body):
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)

    cfg = dict(config)
    if args.config:
        for k, v in zip(("tokens", "hidden", "ffn", "runs"), args.config.split(",")):
            cfg.setdefault(k, v)
    sizes = (f"S={cfg.get('tokens')}, H={cfg.get('hidden')}, F={cfg.get('ffn')}, "
             f"{cfg.get('ranks', 2)} ranks, median of {cfg.get('runs')} runs")
    if cfg.get("streams") is not None:
        sizes += f", hostir streams {cfg.get('streams')}"
    threads = ", ".join(str(x) for x in sorted(torch_threads, key=str) if x is not None)
    if threads:
        sizes += f", torch threads per rank {threads}"
    parts = ["# Overlap benchmark: hostir sp-mlp vs torch.distributed (Gloo)", ""]
    if args.run_info and os.path.exists(args.run_info):
        with open(args.run_info) as f:
            parts += ["```", f.read().rstrip(), "```", ""]
    parts += [f"Sizes: {sizes}. Times in ms.", "",
              "## Medians (ms)", "", table(head, times), "",
              "## Ratios", "", table(head2, ratios), "",
              "Fraction of ideal gain = (Tserial − Tpipelined) / (Tserial − max(Tcomm, Tcomp)), "
              "Tserial = hostir unchunked, Tcomm = comm-only, Tcomp = compute-only "
              "(— where Tserial ≤ max(Tcomm, Tcomp): nothing to gain). "
              "Ratios below 1 mean the numerator is faster."]
    same_c = []
    for rate, h, _ in rows:
        if not h or not h["best"]:
            continue
        c = h["best"][1]
        comm_c = h.get("comm_by_chunks", {}).get(c)
        comp_c = h.get("compute_by_chunks", {}).get(c)
        if comm_c is not None and comp_c is not None and c != 1:
            same_c.append([rate, str(c), ms(h["best"][0]), ms(comp_c), ms(comm_c), fmt_ratio(
                ideal_fraction(h["unchunked"], h["best"][0], comm_c, comp_c))])
    if same_c:
        parts += ["", "## hostir against its compute-only / comm-only at the same chunk count",
                  "", table(["link", "C", "hostir pipelined", "compute-only", "comm-only",
                             "fraction of ideal gain (same C)"], same_c)]
    if torch_rows:
        parts += ["", "## torch.distributed per chunk count (ms)", "", table(head3, torch_rows),
                  "", "Chunking alone changes the CPU GEMMs' speed (smaller operands stay in "
                  "cache), so a chunked program's compute-only time can be well below the "
                  "unchunked one: \"same C\" uses the compute-only and comm-only times of the "
                  "pipelined program's own chunk count, which separates the gain of overlap "
                  "from the gain of chunking."]
    if notes:
        parts += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    pngs = [f"timeline_{tag(r)}.png" for r, _, _ in rows
            if os.path.exists(os.path.join(args.out, f"timeline_{tag(r)}.png"))]
    if pngs:
        parts += ["", "## Timelines (one traced pipelined hostir run per link)", ""]
        parts += [f"![{p}]({p})" for p in pngs]
    text = "\n".join(parts) + "\n"
    print(text)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    print(f"wrote {os.path.join(args.out, 'results.md')} and summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

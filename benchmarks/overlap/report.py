#!/usr/bin/python3
"""Builds the overlap benchmark's tables from the JSON files run.sh wrote.

    report.py OUT_DIR [--rates 200mbit,500mbit,1gbit,loopback] [--run-info FILE] [--layer]

Reads OUT_DIR/raw/hostir_<rate>.json (hostir sp-mlp --json) and
OUT_DIR/raw/torch_<rate>.json (torch_sp_mlp.py --json), prints the tables as
Markdown and writes them to OUT_DIR/results.md, with everything combined in
OUT_DIR/summary.json. Without --rates, every rate found in OUT_DIR/raw is
reported.

With --layer (run.sh --layer), the transformer layer instead:
OUT_DIR/raw/hostir_layer_<rate>[.rN].json (hostir sp-layer --json) and
OUT_DIR/raw/torch_layer_<rate>[.rN].json (torch_sp_layer.py --json), one
file per round; the rounds of a program are pooled (their runs concatenated,
the median taken over all of them).
"""

import argparse
import glob
import json
import os
import re
import statistics
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


def rates_of(args, raw, pattern):
    """The links to report: --rates, else those of the files in `raw` whose
    names match `pattern` (group 2: the rate's tag; traces left out),
    slowest first."""
    if args.rates:
        return [r for r in args.rates.split(",") if r]
    found = set()
    for f in glob.glob(os.path.join(raw, "*.json")):
        m = re.fullmatch(pattern, os.path.basename(f))
        if m and not m.group(2).startswith("trace_"):
            found.add(m.group(2))
    return sorted(found, key=rate_key)


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


def hostir_median_cells(h, fixed_cols):
    """hostir's cells of a medians row: best fixed (C), each fixed C, auto
    (C), unchunked, comm-only, compute-only (dashes without a result)."""
    if not h:
        return ["—"] * (len(fixed_cols) + 5)
    return ([f"{ms(h['best'][0])} ({h['best'][1]})" if h["best"] else "—"]
            + [ms(h["fixed"].get(c)) for c in fixed_cols]
            + [f"{ms(h['auto'][0])} ({h['auto'][1]})" if h["auto"] else "—",
               ms(h["unchunked"]), ms(h["comm"]), ms(h["compute"])])


def machine_of(cfg):
    """(", machine ..., GEMMs ..." for the sizes line, " on <isa>" for the table
    headings) from hostir's --json config (issue 39: which ISA and GEMM path
    ran); empty for reports written before it."""
    if not cfg.get("isa"):
        return "", ""
    text = f", machine {cfg.get('machine', cfg['isa'])}"
    if cfg.get("gemm_path"):
        text += f", GEMMs: {cfg['gemm_path']}"
    return text, f" on {cfg['isa']}"


# How far below its bound a program may run and still be "at the bound" (the
# rule of hostir's --baselines, IdealGain in tools/sharded_job.h; issue 39).
BOUND_NOISE = 0.03


def torch_machine_text(machines):
    """", torch: <ISA, GEMM path>" (torch_harness.torch_machine), or "" before it."""
    named = sorted(m for m in machines if m)
    return f", torch: {'; '.join(named)}" if named else ""


def ideal_gain(t_serial, t_pipe, t_comm, t_comp):
    """((Tserial - Tpipelined) / (Tserial - max(Tcomm, Tcomp)) at most 1, or
    None; how far below that bound the program ran). None where a time is
    missing, Tserial is within BOUND_NOISE of the bound, or the program ran
    more than BOUND_NOISE below it (the halves, timed apart, are off)."""
    if None in (t_serial, t_pipe, t_comm, t_comp):
        return None, 0.0
    bound = max(t_comm, t_comp)
    below = max(0.0, (bound - t_pipe) / bound) if bound > 0 else 0.0
    if t_serial <= bound * (1 + BOUND_NOISE) or below > BOUND_NOISE:
        return None, below
    return min(1.0, (t_serial - t_pipe) / (t_serial - bound)), below


def ideal_fraction(t_serial, t_pipe, t_comm, t_comp):
    return ideal_gain(t_serial, t_pipe, t_comm, t_comp)[0]  # None where none is printed


def fmt_gain(t_serial, t_pipe, t_comm, t_comp):
    """ideal_gain as a cell: "0.77", "1.00 (at bound)", "— (X % below bound)", "—"."""
    fraction, below = ideal_gain(t_serial, t_pipe, t_comm, t_comp)
    if fraction is not None:
        return f"{fraction:.2f}" + (" (at bound)" if below > 0 else "")
    return f"— ({100 * below:.0f} % below bound)" if below > BOUND_NOISE else "—"


def own_halves(h, chunks):
    """(comm-only, compute-only) at `chunks` chunks, else the unchunked order's."""
    comm = h.get("comm_by_chunks", {}).get(chunks, h["comm"])
    comp = h.get("compute_by_chunks", {}).get(chunks, h["compute"])
    return comm, comp


def link_section(raw, rows, cfg, summary, halves):
    """The report's "Against the link's physical bound" part, for a program of
    `halves` allgather + reduce-scatter pairs (the MLP block 1, the layer 2);
    empty without duplex_link.py results."""
    link_rows = link_bound_rows(raw, rows, cfg, summary, halves)
    if not link_rows:
        return []
    each_way = "S·H·4" if halves == 1 else f"{halves}·S·H·4"
    return ["", "## Against the link's physical bound", "",
            table(["link", "duplex rate (Mbit/s each way)", "simplex rate (Mbit/s)",
                   "link time of the program's bytes", "hostir comm-only / link time",
                   "hostir comm-only at best C / link time", "physical bound",
                   "hostir best fixed / bound", "torch best / bound",
                   "fraction of ideal gain vs bound (best fixed)", "(auto)"], link_rows), "",
            "The link time of the program's bytes is what `duplex_link.py` measured in the "
            "same namespaces: a plain TCP socket moving, in both directions at once, the bytes "
            "each rank sends (and receives) per run: for each allgather + reduce-scatter pair, "
            "its allgather shard and the half of its partial sums the reduce-scatter sends, "
            f"{each_way} bytes each way on 2 ranks. hostir comm-only moves them as the "
            "unchunked program does (an allgather, then a reduce-scatter); at best C, as the "
            "program of the best fixed chunk count does (its allgathers posted at once, each "
            "chunk's reduce-scatter once its allgather is done), compute taken away. "
            "Physical bound = max(that link time, hostir compute-only of the best fixed "
            "C's program: its own compute, its collectives replaced by local copies; auto's "
            "fraction uses its own C's); the fraction of ideal gain against it = "
            "(Tunchunked − Tpipelined) / (Tunchunked − bound), at most 1, none where the "
            f"program ran more than {100 * BOUND_NOISE:.0f} % below the bound."]


def link_bound_rows(raw, rows, cfg, summary, halves=1):
    """One row per rate with a duplex_link.py result: the link time of the
    program's bytes (`halves` allgather + reduce-scatter pairs of S·H floats
    on 2 ranks) at the measured duplex rate and the programs against the
    physical bound max(link time, compute-only). Adds the figures to
    summary[rate]["link"]."""
    out = []
    for rate, h, t in rows:
        link = load(os.path.join(raw, f"link_{tag(rate)}.json"))
        if not link:
            continue
        try:
            block_bytes = halves * int(cfg["tokens"]) * int(cfg["hidden"]) * 4
        except (KeyError, TypeError, ValueError):
            continue
        seconds_per_byte = link["duplex_s"] / link["bytes_each_way"]
        link_ms = block_bytes * seconds_per_byte * 1e3
        best = h["best"][0] if h and h["best"] else None
        auto = h["auto"][0] if h and h["auto"] else None
        unch = h["unchunked"] if h else None
        # Each program is held to its own chunk count's compute (issue 39).
        comp_best = own_halves(h, h["best"][1])[1] if h and h["best"] else None
        comp_auto = own_halves(h, h["auto"][1])[1] if h and h["auto"] else None
        bound = max(link_ms, comp_best) if comp_best is not None else None
        bound_auto = max(link_ms, comp_auto) if comp_auto is not None else None
        comm_best_c = (h.get("comm_by_chunks", {}).get(h["best"][1])
                       if h and h["best"] else None)
        t_pipe = t.get("pipelined_ms") if t else None
        vals = {
            "duplex_mbit_each_way": link["duplex_mbit_each_way"],
            "simplex_mbit": link["simplex_mbit"],
            "link_time_ms": link_ms,
            "comm_only_over_link_time": ratio(h["comm"] if h else None, link_ms),
            "comm_only_best_c_over_link_time": ratio(comm_best_c, link_ms),
            "physical_bound_ms": bound,
            "physical_bound_auto_ms": bound_auto,
            "best_over_bound": ratio(best, bound),
            "torch_best_over_bound": ratio(t_pipe, bound),
            "ideal_gain_fraction_vs_bound_best": ideal_fraction(unch, best, link_ms, comp_best),
            "ideal_gain_fraction_vs_bound_auto": ideal_fraction(unch, auto, link_ms, comp_auto),
        }
        summary.setdefault(rate, {})["link"] = vals
        out.append([rate, f"{vals['duplex_mbit_each_way']:.0f}", f"{vals['simplex_mbit']:.0f}",
                    ms(link_ms)] + [fmt_ratio(vals["comm_only_over_link_time"]),
                                    fmt_ratio(vals["comm_only_best_c_over_link_time"]), ms(bound)]
                   + [fmt_ratio(vals[k]) for k in ("best_over_bound", "torch_best_over_bound")]
                   + [fmt_gain(unch, best, link_ms, comp_best),
                      fmt_gain(unch, auto, link_ms, comp_auto)])
    return out


def table(header, body):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--rates", default=None)
    p.add_argument("--run-info", default=None, help="text put at the top of results.md")
    p.add_argument("--config", default=None,
                   help="tokens,hidden,ffn,runs: used where no JSON file gives them")
    p.add_argument("--layer", action="store_true",
                   help="report the transformer layer (hostir_layer_*/torch_layer_* files)")
    args = p.parse_args(argv)
    raw = os.path.join(args.out, "raw")
    if args.layer:
        return layer_report(args, raw)

    rates = rates_of(args, raw, r"(hostir|torch)_(.+)\.json")
    if not rates:
        print(f"report.py: no results in {raw}", file=sys.stderr)
        return 2

    rows, notes, summary = [], [], {}
    all_fixed = set()
    config = {}
    torch_threads, torch_machines = set(), set()
    for rate in rates:
        h_data = load(os.path.join(raw, f"hostir_{tag(rate)}.json"))
        t_data = load(os.path.join(raw, f"torch_{tag(rate)}.json"))
        h = hostir_summary(h_data) if h_data else None
        if h:
            all_fixed |= set(h["fixed"])
            config = config or h["config"]
        if t_data:
            torch_threads.add(t_data.get("config", {}).get("threads"))
            torch_machines.add(t_data.get("config", {}).get("machine"))
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
        r = [rate] + hostir_median_cells(h, fixed_cols)
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
        halves_best = own_halves(h, h["best"][1]) if h and h["best"] else (None, None)
        halves_auto = own_halves(h, h["auto"][1]) if h and h["auto"] else (None, None)
        t_pipe = t.get("pipelined_ms") if t else None
        t_ser = t.get("serial_ms") if t else None
        vals = {
            "hostir_pipelined_over_torch_pipelined": ratio(best, t_pipe),
            "hostir_pipelined_over_hostir_unchunked": ratio(best, unch),
            "auto_over_best_fixed": ratio(auto, best),
            "ideal_gain_fraction_best": ideal_fraction(unch, best, *halves_best),
            "ideal_gain_fraction_auto": ideal_fraction(unch, auto, *halves_auto),
            "hostir_unchunked_over_torch_serial": ratio(unch, t_ser),
            "torch_pipelined_over_torch_serial": ratio(t_pipe, t_ser),
        }
        cells = [fmt_ratio(v) for v in vals.values()]
        cells[3] = fmt_gain(unch, best, *halves_best)
        cells[4] = fmt_gain(unch, auto, *halves_auto)
        ratios.append([rate] + cells)
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
                               fmt_gain(ser, p["median_ms"], b.get("comm_only_ms"),
                                        b.get("compute_only_ms"))])

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
    machine, on_isa = machine_of(cfg)
    sizes += machine + torch_machine_text(torch_machines)
    parts = ["# Overlap benchmark: hostir sp-mlp vs torch.distributed (Gloo)", ""]
    if args.run_info and os.path.exists(args.run_info):
        with open(args.run_info) as f:
            parts += ["```", f.read().rstrip(), "```", ""]
    parts += [f"Sizes: {sizes}. Times in ms.", "",
              f"## Medians (ms){on_isa}", "", table(head, times), "",
              f"## Ratios{on_isa}", "", table(head2, ratios), "",
              "Fraction of ideal gain = (Tserial − Tpipelined) / (Tserial − max(Tcomm, Tcomp)), "
              "Tserial = hostir unchunked, Tcomm and Tcomp = the program's own comm-only and "
              "compute-only at its chunk count (the unchunked order's where the JSON has no "
              "per-chunk figure); at most 1; \"at bound\" where the program ran up to "
              f"{100 * BOUND_NOISE:.0f} % below max(Tcomm, Tcomp), no fraction (\"X % below "
              "bound\": the halves were timed apart, the baseline is off) further below, and "
              "— where Tserial is within that noise of the bound: nothing to gain. "
              "Ratios below 1 mean the numerator is faster."]
    same_c = []
    for rate, h, _ in rows:
        if not h or not h["best"]:
            continue
        c = h["best"][1]
        comm_c = h.get("comm_by_chunks", {}).get(c)
        comp_c = h.get("compute_by_chunks", {}).get(c)
        if comm_c is not None and comp_c is not None and c != 1:
            same_c.append([rate, str(c), ms(h["best"][0]), ms(comp_c), ms(comm_c),
                           fmt_gain(h["unchunked"], h["best"][0], comm_c, comp_c)])
    if same_c:
        parts += ["", "## hostir against its compute-only / comm-only at the same chunk count",
                  "", table(["link", "C", "hostir pipelined", "compute-only", "comm-only",
                             "fraction of ideal gain (same C)"], same_c)]
    parts += link_section(raw, rows, cfg, summary, halves=1)
    if torch_rows:
        parts += ["", "## torch.distributed per chunk count (ms)", "", table(head3, torch_rows),
                  "", "Chunking alone changes the CPU GEMMs' speed (smaller operands stay in "
                  "cache), so a chunked program's compute-only time can be well below the "
                  "unchunked one: \"same C\" uses the compute-only and comm-only times of the "
                  "pipelined program's own chunk count, which separates the gain of overlap "
                  "from the gain of chunking."]
    return write_report(args, parts, notes, rows, summary, "timeline_")


# ---- the transformer layer (run.sh --layer) ----------------------------------

def median(values):
    return statistics.median(values) if values else None


def round_files(raw, side, rate):
    """{round: JSON} of raw/<side>_layer_<rate>.json (round 0) and
    raw/<side>_layer_<rate>.rN.json (round N), those that load."""
    base = os.path.join(raw, f"{side}_layer_{tag(rate)}")
    found = {}
    for path in glob.glob(base + ".json") + glob.glob(base + ".r[0-9]*.json"):
        m = re.search(r"\.r([0-9]+)\.json$", path)
        data = load(path)
        if data:
            found[int(m.group(1)) if m else 0] = data
    return dict(sorted(found.items()))


def merge_hostir(datas):
    """hostir sp-layer JSON files of several rounds as one: every program's
    runs pooled (a fixed count keyed by its C, auto by its name: the count auto
    chose may differ between rounds), the medians recomputed."""
    merged = {"config": datas[0].get("config", {}), "programs": [], "rounds": len(datas),
              "auto_rounds": [d["auto"] for d in datas if d.get("auto")]}
    programs = {}
    for data in datas:
        for p in data.get("programs", []):
            name = p.get("name")
            # A fixed count's program, and comm-only per chunk count, keyed by
            # their C; auto by its name (its count may differ between rounds).
            key = (name, p.get("chunks") if name in ("pipelined", "comm-only") else None)
            e = programs.setdefault(key, {"name": name, "chunks": [], "runs_ms": [],
                                          "check": True})
            if p.get("chunks") is not None and p["chunks"] not in e["chunks"]:
                e["chunks"].append(p["chunks"])
            e["runs_ms"] += p.get("runs_ms") or ([p["median_ms"]] if "median_ms" in p else [])
            if p.get("check") is False:
                e["check"] = False
    for (name, _), e in programs.items():
        entry = {"name": name, "median_ms": median(e["runs_ms"]), "runs_ms": e["runs_ms"],
                 "check": e["check"]}
        if e["chunks"]:
            entry["chunks"] = (e["chunks"][0] if len(e["chunks"]) == 1
                               else "/".join(str(c) for c in e["chunks"]))
        merged["programs"].append(entry)
    if merged["auto_rounds"]:
        merged["auto"] = merged["auto_rounds"][-1]
    return merged


def merge_torch(datas):
    """torch_sp_layer.py JSON files of several rounds as one (runs pooled)."""
    serial = [r for d in datas for r in d.get("serial_runs_ms", [])]
    by_c, breakdown = {}, {}
    for d in datas:
        for p in d.get("pipelined", []):
            e = by_c.setdefault(p["chunks"], {"chunks": p["chunks"], "schedule": p.get("schedule"),
                                              "runs_ms": [], "check": True})
            e["runs_ms"] += p.get("runs_ms", [])
            e["check"] = e["check"] and bool(p.get("check"))
        for c, b in d.get("breakdown", {}).items():
            e = breakdown.setdefault(c, {"compute_only_runs_ms": [], "comm_only_runs_ms": []})
            e["compute_only_runs_ms"] += b.get("compute_only_runs_ms", [])
            e["comm_only_runs_ms"] += b.get("comm_only_runs_ms", [])
    pipelined = []
    for c in sorted(by_c):
        e = by_c[c]
        e["median_ms"] = median(e["runs_ms"])
        pipelined.append(e)
    for e in breakdown.values():
        e["compute_only_ms"] = median(e["compute_only_runs_ms"])
        e["comm_only_ms"] = median(e["comm_only_runs_ms"])
    best = min(pipelined, key=lambda p: p["median_ms"]) if pipelined else None
    return {"serial_ms": median(serial), "serial_runs_ms": serial,
            "pipelined_ms": best["median_ms"] if best else None,
            "chunks": best["chunks"] if best else None,
            "check": all(d.get("check", False) for d in datas),
            "max_abs_diff": max((d.get("max_abs_diff") or 0.0) for d in datas),
            "pipelined": pipelined, "breakdown": breakdown,
            "config": datas[0].get("config", {}), "rounds": len(datas)}


def layer_report(args, raw):
    rates = rates_of(args, raw, r"(hostir|torch)_layer_(.+?)(\.r[0-9]+)?\.json")
    if not rates:
        print(f"report.py: no layer results in {raw}", file=sys.stderr)
        return 2

    rows, notes, summary = [], [], {}
    all_fixed, config, torch_threads, rounds = set(), {}, set(), set()
    torch_machines = set()
    per_round = []
    for rate in rates:
        h_rounds = round_files(raw, "hostir", rate)
        t_rounds = round_files(raw, "torch", rate)
        h_files, t_files = list(h_rounds.values()), list(t_rounds.values())
        h_data = merge_hostir(h_files) if h_files else None
        t = merge_torch(t_files) if t_files else None
        for n in sorted(set(h_rounds) | set(t_rounds)):
            hr = hostir_summary(h_rounds[n]) if n in h_rounds else None
            tr = t_rounds.get(n)
            hr_best = hr["best"] if hr else None
            t_pipe = tr.get("pipelined_ms") if tr else None
            per_round.append([
                rate, str(n),
                f"{ms(hr_best[0])} ({hr_best[1]})" if hr_best else "—",
                ms(hr["unchunked"]) if hr else "—",
                ms(tr.get("serial_ms")) if tr else "—",
                f"{ms(t_pipe)} ({tr.get('chunks')})" if tr and t_pipe is not None else "—",
                fmt_ratio(ratio(hr_best[0] if hr_best else None, t_pipe))])
        h = hostir_summary(h_data) if h_data else None
        if h:
            all_fixed |= set(h["fixed"])
            config = config or h["config"]
            rounds.add(h_data["rounds"])
        if t:
            torch_threads.add(t["config"].get("threads"))
            torch_machines.add(t["config"].get("machine"))
            config = config or t["config"]
            rounds.add(t["rounds"])
        rows.append((rate, h, t))
        if h is None:
            notes.append(f"{rate}: no hostir result (see logs/hostir_layer_{tag(rate)}*.log)")
        elif not h["checks_ok"]:
            notes.append(f"{rate}: a hostir program FAILED its check against ATen")
        if t is None:
            notes.append(f"{rate}: no torch result (see logs/torch_layer_{tag(rate)}*.log)")
        elif not t["check"]:
            notes.append(f"{rate}: the torch layer FAILED its check")
        else:
            notes.append(f"{rate}: torch checks passed on every rank, max |diff| "
                         f"{t['max_abs_diff']:.3g} (rtol = atol = 1e-4)")
        for i, a in enumerate(h_data["auto_rounds"] if h_data else []):
            notes.append(f"{rate}: auto (round {i + 1}) chose {a.get('chunks')} chunks: "
                         f"{a.get('reason', '')}")

    fixed_cols = sorted(all_fixed)
    head = (["link", "hostir pipelined best (C)"] + [f"hostir C={c}" for c in fixed_cols]
            + ["hostir auto (C)", "hostir unchunked", "hostir comm-only", "hostir compute-only",
               "torch serial", "torch pipelined best (C)"])
    times = []
    head2 = ["link", "hostir best / torch pipelined", "hostir auto / torch pipelined",
             "hostir best / torch serial", "hostir unchunked / torch serial",
             "hostir best / hostir unchunked", "auto / best fixed",
             "torch pipelined / torch serial"]
    ratios = []
    head3 = ["link", "C", "torch", "torch compute-only", "torch comm-only", "/ serial",
             "fraction of ideal gain (same C)"]
    torch_rows = []
    for rate, h, t in rows:
        r = [rate] + hostir_median_cells(h, fixed_cols)
        if t:
            r += [ms(t["serial_ms"]), f"{ms(t['pipelined_ms'])} ({t['chunks']})"]
        else:
            r += ["—", "—"]
        times.append(r)
        best = h["best"][0] if h and h["best"] else None
        auto = h["auto"][0] if h and h["auto"] else None
        unch = h["unchunked"] if h else None
        t_pipe = t["pipelined_ms"] if t else None
        t_ser = t["serial_ms"] if t else None
        vals = {
            "hostir_best_over_torch_pipelined": ratio(best, t_pipe),
            "hostir_auto_over_torch_pipelined": ratio(auto, t_pipe),
            "hostir_best_over_torch_serial": ratio(best, t_ser),
            "hostir_unchunked_over_torch_serial": ratio(unch, t_ser),
            "hostir_best_over_hostir_unchunked": ratio(best, unch),
            "auto_over_best_fixed": ratio(auto, best),
            "torch_pipelined_over_torch_serial": ratio(t_pipe, t_ser),
        }
        ratios.append([rate] + [fmt_ratio(v) for v in vals.values()])
        summary[rate] = {"hostir": h, "torch": t, "ratios": vals}
        if t:
            bd = t["breakdown"]
            b1 = bd.get("1", {})
            torch_rows.append([rate, "serial", ms(t_ser), ms(b1.get("compute_only_ms")),
                               ms(b1.get("comm_only_ms")), "1.00", "—"])
            for p in t["pipelined"]:
                b = bd.get(str(p["chunks"]), {})
                torch_rows.append([rate, str(p["chunks"]), ms(p["median_ms"]),
                                   ms(b.get("compute_only_ms")), ms(b.get("comm_only_ms")),
                                   fmt_ratio(ratio(p["median_ms"], t_ser)),
                                   fmt_gain(t_ser, p["median_ms"], b.get("comm_only_ms"),
                                            b.get("compute_only_ms"))])

    cfg = dict(config)
    if args.config:
        for k, v in zip(("tokens", "hidden", "ffn", "runs", "heads"), args.config.split(",")):
            cfg.setdefault(k, v)
    runs = f"{cfg.get('runs')} runs"
    if rounds and max(rounds) > 1:
        runs += f" in each of {'/'.join(str(r) for r in sorted(rounds))} rounds (pooled)"
    sizes = (f"T={cfg.get('tokens')}, H={cfg.get('hidden')}, heads={cfg.get('heads')}, "
             f"F={cfg.get('ffn')}, {cfg.get('ranks', 2)} ranks, median of {runs}")
    if cfg.get("streams") is not None:
        sizes += f", hostir streams {cfg.get('streams')}"
    if cfg.get("thread_budget"):
        sizes += f", hostir thread budget per rank: {cfg.get('thread_budget')}"
    threads = ", ".join(str(x) for x in sorted(torch_threads, key=str) if x is not None)
    if threads:
        sizes += f", torch threads per rank {threads}"
    machine, on_isa = machine_of(cfg)
    sizes += machine + torch_machine_text(torch_machines)
    parts = ["# Overlap benchmark, transformer layer: hostir sp-layer vs torch.distributed (Gloo)",
             ""]
    if args.run_info and os.path.exists(args.run_info):
        with open(args.run_info) as f:
            parts += ["```", f.read().rstrip(), "```", ""]
    parts += [f"Sizes: {sizes}. Times in ms.", "",
              "Both sides pipeline both halves over C chunks (--chunks C): the attention's "
              "allgather chunk by chunk with the Q/K/V projections, its query chunks "
              "each against its causal prefix of keys, each chunk's sums over "
              "the heads reduce-scattered in the loop as soon as every rank's rows of them "
              "are computed; the MLP block as in sp-mlp. hostir's query loop walks C "
              "chunks of the whole sequence in token order (its allgathers and MLP: "
              "C chunks of each rank's rows), torch's attention d·C blocks. "
              "hostir's compute-only figures are the layer's own compute (its "
              "collectives replaced by local copies; reports from before issue 39: the "
              "layer as plain ATen), one per chunk count; the physical bound below uses "
              "the best fixed C's, because a chunked layer computes less attention.", "",
              f"## Medians (ms){on_isa}", "", table(head, times), "",
              f"## Ratios{on_isa}", "", table(head2, ratios), "",
              "Ratios below 1 mean the numerator is faster. hostir best = its best fixed C; "
              "torch pipelined = its best C. Issue 19's targets (500 Mbit/s): hostir pipelined "
              "≤ 0.90 × torch pipelined and ≤ 0.80 × hostir unchunked."]
    if len(per_round) > len(rows):
        parts += ["", "## Per round (ms)", "",
                  table(["link", "round", "hostir best (C)", "hostir unchunked", "torch serial",
                         "torch pipelined best (C)", "hostir best / torch pipelined"],
                        per_round),
                  "", "Each round's own medians (odd rounds ran hostir first, even rounds "
                  "torch first): a change of the machine's load between the two sides of a "
                  "round shows here."]
    parts += link_section(raw, rows, cfg, summary, halves=2)
    if torch_rows:
        parts += ["", "## torch.distributed per chunk count (ms)", "", table(head3, torch_rows),
                  "", "Fraction of ideal gain (same C) = (Tserial − TC) / (Tserial − "
                  "max(Tcomm C, Tcomp C)), with the compute-only and comm-only times of the "
                  "same chunk count (— where nothing is to gain). A chunked layer also computes "
                  "less attention (each query block against its causal prefix only) and runs "
                  "smaller GEMMs, so its compute-only time is below the serial one."]
    return write_report(args, parts, notes, rows, summary, "timeline_layer_")


def write_report(args, parts, notes, rows, summary, timeline_prefix):
    """Adds the notes and the timelines found in args.out to the report's
    parts, prints it and writes results.md and summary.json there."""
    if notes:
        parts += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    pngs = [f"{timeline_prefix}{tag(r)}.png" for r, _, _ in rows
            if os.path.exists(os.path.join(args.out, f"{timeline_prefix}{tag(r)}.png"))]
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

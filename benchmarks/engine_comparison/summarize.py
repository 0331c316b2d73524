"""Reads run.sh's log and prints the comparison table (medians)."""
import statistics
import sys
from collections import defaultdict

compiles = defaultdict(list)
times = defaultdict(list)
rel = defaultdict(float)
loc = {}
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    if f[0] == "compile":
        compiles[(f[1], f[2], f[3])].append(float(f[4]))
    elif f[0] == "time":
        key = (f[1], f[2], f[3])
        times[key].append(float(f[4]))
        rel[key] = max(rel[key], float(f[5]))
    elif f[0] == "loc":
        loc[f[1]] = int(f[2])

med = statistics.median
floor = med(times[("floor", "memory", "-")])
print(f"\nmemory floor (y = x + 1 over 16M floats, one read + one write, g++ -O3): "
      f"{floor:.1f} ms (median of {len(times[('floor', 'memory', '-')])})")
print("kernel time: median over rounds, 1 thread; compile: 3 fresh compiles in one "
      "process, median (first)")
print()
hdr = ("| engine | mode | chain compile ms | chain ms | chain / floor | chain max rel diff "
       "| softmax compile ms | softmax ms | softmax max rel diff |")
print(hdr)
print("|" + "---|" * (hdr.count("|") - 1))
rows = []
for engine, label in (("halide", "Halide 14 JIT"), ("llvm", "LLVM 15 ORC"),
                      ("mlir", "MLIR 15")):
    modes = sorted({k[2] for k in times if k[0] == engine},
                   key=lambda m: (m != "strict", m != "fast", m))
    rows += [(label, engine, m) for m in modes]
for label, engine, mode in rows:
    cells = [label, mode]
    for kernel in ("chain", "softmax"):
        c = compiles.get((engine, kernel, mode))
        cells.append(f"{med(c):.0f} ({c[0]:.0f})" if c else "—")
        t = times[(engine, kernel, mode)]
        cells.append(f"{med(t):.1f}")
        if kernel == "chain":
            cells.append(f"{med(t) / floor:.1f}x")
        cells.append(f"{rel[(engine, kernel, mode)]:.2g}")
    print("| " + " | ".join(cells) + " |")
for mode in ("strict", "fast"):
    c = [compiles.get(("halide-aot", k, mode)) for k in ("chain", "softmax")]
    if all(c):
        print(f"Halide 14 as hostir compiles ({mode}: object without runtime + cc -shared): "
              f"chain {med(c[0]):.0f} ms ({c[0][0]:.0f}), softmax {med(c[1]):.0f} ms "
              f"({c[1][0]:.0f}), median (first) of 3")
print()
for f, n in loc.items():
    print(f"kernel construction, {f}: {n} lines (non-blank, non-comment, "
          "between the BEGIN/END markers)")

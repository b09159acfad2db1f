#!/usr/bin/env python3
"""What HotSpot's JIT compiled inside a window of a JVM's life, from its -XX:+LogCompilation file.

Usage: benchmarks/compiles-in-window.py LOG FROM_S TO_S [TOP]

FROM_S and TO_S are seconds since the JVM started (the log's own stamps). It prints the compile
time of the server compiler (C2, level 4) that fell inside the window, split into first compiles
of a method and compiles of a method compiled before (after a deoptimization threw its code away),
the deoptimizations inside the window with the place that hit each (method and bytecode index,
innermost first), and the TOP (default 15) largest compiles in the window. A compile that
straddles an edge counts for its part inside. benchmarks/coordinator-threads.sh runs it on each
round when JIT_LOG=1.
"""
import re
import sys
from collections import defaultdict

ATTR = re.compile(r"(\w+)='([^']*)'")


def attrs(text):
    return dict(ATTR.findall(text))


def read(path):
    """Compiles as (task attributes, start, end) and deoptimizations as (attributes, [(method, bci)])."""
    compiles, traps = [], []
    task = None
    trap = None
    in_compiler_log = False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("<compilation_log "):
                in_compiler_log = True
            elif line.startswith("</compilation_log>"):
                in_compiler_log = False
            elif in_compiler_log and line.startswith("<task "):
                task = attrs(line)
            elif in_compiler_log and line.startswith("<task_done ") and task is not None:
                compiles.append((task, float(task["stamp"]), float(attrs(line)["stamp"])))
                task = None
            elif not in_compiler_log and line.startswith("<uncommon_trap thread="):
                trap = (attrs(line), [])
                traps.append(trap)
            elif trap is not None and line.startswith("<jvms "):
                a = attrs(line)
                trap[1].append((a.get("method", "?"), a.get("bci", "?")))
            elif trap is not None and line.startswith("</uncommon_trap>"):
                trap = None
    return compiles, traps


def short(method):
    """'dev.panoptes.x.Foo bar (Ljava/...)V' -> 'Foo.bar'; a lambda's holder loses its address."""
    name = method.split(" (")[0]
    holder, _, m = name.partition(" ")
    return holder.split("/")[0].rsplit(".", 1)[-1] + "." + m


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    try:
        path, w0, w1 = argv[1], float(argv[2]), float(argv[3])
        top = int(argv[4]) if len(argv) > 4 else 15
    except ValueError:
        sys.exit("FROM_S and TO_S are seconds (numbers) and TOP a count\n" + __doc__)
    try:
        compiles, traps = read(path)
    except OSError as e:
        sys.exit(f"cannot read {path}: {e.strerror}; it is the file -XX:LogFile= named"
                 f" (with -XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation)")
    if not compiles:
        sys.exit(f"{path} holds no compile: is it a -XX:+LogCompilation file of a JVM that ran long enough?")
    compiled_before = set()
    first = again = 0.0
    n_first = n_again = 0
    inside = []
    for task, start, end in sorted(compiles, key=lambda c: c[1]):
        if task.get("level", "4") != "4":
            continue
        key = (task["method"], task.get("osr_bci"))
        recompile = key in compiled_before or "decompiles" in task
        compiled_before.add(key)
        part = max(0.0, min(end, w1) - max(start, w0))
        if part <= 0:
            continue
        inside.append((part, task, start, recompile))
        if recompile:
            again += part
            n_again += 1
        else:
            first += part
            n_first += 1
    print(f"C2 compile time in the window {w0:.1f}-{w1:.1f} s: {1000 * (first + again):.0f} ms;"
          f" first compiles {1000 * first:.0f} ms ({n_first}), recompiles {1000 * again:.0f} ms ({n_again})")
    in_traps = [(a, where) for a, where in traps if w0 <= float(a.get("stamp", "-1")) <= w1]
    print(f"deoptimizations in the window: {len(in_traps)}")
    by_site = defaultdict(list)
    for a, where in in_traps:
        site = " < ".join(f"{short(m)}@{bci}" for m, bci in where[:3])
        by_site[(a.get("reason"), a.get("action"), site)].append(float(a["stamp"]))
    for (reason, action, site), stamps in sorted(by_site.items(), key=lambda kv: kv[1][0]):
        at = ", ".join(f"{s:.1f}" for s in stamps)
        print(f"  {reason} ({action}) at {at} s: {site}")
    print("largest compiles in the window:")
    for part, task, start, recompile in sorted(inside, key=lambda x: -x[0])[:top]:
        kind = "recompile" if recompile else "first"
        osr = " (OSR)" if task.get("osr_bci") else ""
        print(f"  {1000 * part:6.0f} ms at {start:5.1f} s  {kind:9s} {short(task['method'])}{osr}")


if __name__ == "__main__":
    main(sys.argv)

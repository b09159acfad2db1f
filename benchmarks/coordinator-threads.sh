#!/usr/bin/env bash
# Per-thread CPU and context switches of the coordinator per stored answer, over a steady window, on the real
# product run of ../shared/evalpeers (coordinator command + SQLite + one worker --capacity C + the stub model at
# LAT ms, job size 1). The window opens once FROM answers are stored and closes at TO (after JIT warm-up, before the
# end of the run); CPU per thread comes from /proc/<pid>/task/*/stat (utime+stime), context switches from
# /proc/<pid>/task/*/status, answers stored from the SQLite file itself; the worker's CPU over the same window is
# printed last, per model call (one per answer at job size 1). Threads of the same kind are summed
# (the JIT's, GC's, ...). Several builds alternate round by round in one invocation, so they share the machine's mood.
#
# Usage: benchmarks/coordinator-threads.sh ROUNDS BUILD_DIR... (each BUILD_DIR holds worker-cli/target/worker.jar)
#   N=100000 C=64 LAT=20 FROM=20000 TO=85000 benchmarks/coordinator-threads.sh 3 /tmp/base /work/wt-x
# Take the CPU lock around it on a shared machine: flock /tmp/panoptes-cpu.lock benchmarks/coordinator-threads.sh ...
# COORD_JAVA_OPTS goes to the coordinator's JVM only, e.g. a profiler: COORD_JAVA_OPTS="-agentpath:/tmp/ap/linux-x64/
# libasyncProfiler.so=start,event=cpu,interval=1ms,threads,collapsed,file=/tmp/coord.collapsed"
# WORKER_JAVA_OPTS likewise goes to the worker's JVM only (its profile then covers the whole run, warm-up included).
# JIT_LOG=1 has the coordinator's JVM log its compiles (-XX:+LogCompilation, in the work directory as jit-ROUND-BUILD.xml)
# and prints after each round what the JIT compiled and deoptimized inside the window (benchmarks/compiles-in-window.py;
# the window's edges in the JVM's own clock come from /proc, to some 0.05 s). Writing that log costs the compiler
# threads CPU of their own: take the target figures from rounds without it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1; shift
N=${N:-100000}; C=${C:-64}; LAT=${LAT:-20}; FROM=${FROM:-20000}; TO=${TO:-85000}
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
w=$(mktemp -d /tmp/coordthreads.XXXX); cd "$w"
python3 - "$N" <<'PY'
import json, sys, random
n = int(sys.argv[1]); r = random.Random(7)
with open("suite.jsonl", "w") as f:
    for i in range(n):
        a, b = r.randint(1, 999), r.randint(1, 999)
        f.write(json.dumps({"id": f"q{i}", "prompt": f"What is {a} + {b}?", "expected": str(a + b)}) + "\n")
PY
first=$1
sport=$(port)
java -jar "$first/worker-cli/target/worker.jar" stub-model --listen 127.0.0.1:$sport --latency ${LAT}ms --concurrency 512 \
  > stub.log 2>&1 & stub=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:$sport/v1/models >/dev/null && break; sleep 0.1; done
# Prints one line per thread kind: name, CPU us per answer, voluntary and involuntary switches per answer.
sample() { # pid -> "name utime+stime vol invol" per task
  for t in /proc/$1/task/*; do
    name=$(tr ' ' '_' < $t/comm 2>/dev/null) || continue
    st=$(sed 's/^.*) //' $t/stat 2>/dev/null) || continue
    set -- $st
    v=$(awk '/^voluntary_ctxt/{print $2}' $t/status 2>/dev/null); nv=$(awk '/^nonvoluntary_ctxt/{print $2}' $t/status 2>/dev/null)
    echo "${t##*/} $name $((${12} + ${13})) ${v:-0} ${nv:-0}"
  done
}
# Seconds since process $1 started, as the JVM's log stamps count them (to the JVM's start-up, some 0.05 s).
uptime_of() { python3 -c "
import os, sys
start = int(open('/proc/%s/stat' % sys.argv[1]).read().rsplit(')', 1)[1].split()[19]) / os.sysconf('SC_CLK_TCK')
print('%.2f' % (float(open('/proc/uptime').read().split()[0]) - start))" "$1"; }
stored() { python3 -c "
import sqlite3,sys
try:
  c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True, timeout=5); print(c.execute('select count(*) from panoptes_records').fetchone()[0])
except Exception: print(0)" "$1"; }
for r in $(seq "$rounds"); do
  for b in "$@"; do
    rm -f p.db*; cport=$(port); jit=""
    [ "${JIT_LOG:-}" = 1 ] && jit="-XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation -XX:LogFile=$w/jit-$r-$(basename "$b").xml"
    java ${COORD_JAVA_OPTS:-} $jit -jar "$b/worker-cli/target/worker.jar" coordinator --listen 127.0.0.1:$cport --suite suite.jsonl --db p.db \
      --model stub-arithmetic --scorer exact --job-size 1 > coord.log 2>&1 & co=$!
    java ${WORKER_JAVA_OPTS:-} -jar "$b/worker-cli/target/worker.jar" --coordinator 127.0.0.1:$cport --model-api http://127.0.0.1:$sport/v1 \
      --capacity $C > worker.log 2>&1 & wo=$!
    a0=0; while kill -0 $co 2>/dev/null; do a0=$(stored p.db); [ "$a0" -ge "$FROM" ] && break; sleep 0.2; done
    sample $co > s0; sample $wo > w0; t0=$(date +%s.%N); [ -n "$jit" ] && u0=$(uptime_of $co)
    a1=0; while kill -0 $co 2>/dev/null; do a1=$(stored p.db); [ "$a1" -ge "$TO" ] && break; sleep 0.2; done
    sample $co > s1; sample $wo > w1; t1=$(date +%s.%N); [ -n "$jit" ] && u1=$(uptime_of $co)
    wait $co; kill -TERM $wo 2>/dev/null; wait $wo 2>/dev/null
    hz=$(getconf CLK_TCK)
    python3 - "$b" "$r" "$a0" "$a1" "$hz" "$t0" "$t1" <<'PY'
import sys, re, collections
b, r, a0, a1, hz, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
def load(f):
    d = {}
    for line in open(f):
        tid, name, cpu, v, nv = line.split()
        d[tid] = (name, int(cpu), int(v), int(nv))
    return d
s0, s1 = load("s0"), load("s1")
w0, w1 = load("w0"), load("w1")
kind = lambda n: ("panoptes-remote-io" if "-io-" in n else "panoptes-remote-completion" if "completion" in n
                  else "JIT" if "Compiler" in n or n.startswith("C1") or n.startswith("C2") else "GC" if n.startswith("G1") or "GC" in n
                  else n)
agg = collections.defaultdict(lambda: [0, 0, 0])
for tid, (name, cpu, v, nv) in s1.items():
    c0 = s0.get(tid, (name, 0, 0, 0))
    a = agg[kind(name)]
    a[0] += cpu - c0[1]; a[1] += v - c0[2]; a[2] += nv - c0[3]
n = a1 - a0
tot = [sum(x[i] for x in agg.values()) for i in range(3)]
print(f"build={b} round={r} window={n} answers in {t1-t0:.1f} s ({n/(t1-t0):.0f}/s)")
for k, (cpu, v, nv) in sorted(agg.items(), key=lambda kv: -kv[1][0]):
    if cpu or v > n / 100:
        print(f"  {k:28s} {cpu*1e6/hz/n:7.1f} us/answer  vol {v/n:6.3f}  invol {nv/n:6.3f}")
print(f"  {'TOTAL':28s} {tot[0]*1e6/hz/n:7.1f} us/answer  vol {tot[1]/n:6.3f}  invol {tot[2]/n:6.3f}")
# The worker over the same window (threads alive at both samples; its model calls are the answers, job size 1).
wagg = collections.defaultdict(int)
for tid, (name, cpu, v, nv) in w1.items():
    wagg["model-client (io+timer)" if name.startswith("model-client") and "timer" not in name
         else "java (main)" if name == "java" else kind(name)] += cpu - w0.get(tid, (name, 0, 0, 0))[1]
for k, cpu in sorted(wagg.items(), key=lambda kv: -kv[1]):
    if cpu:
        print(f"    worker {k:21s} {cpu*1e6/hz/n:7.1f} us/model call")
wcpu = sum(wagg.values())
print(f"  {'WORKER (whole JVM)':28s} {wcpu*1e6/hz/n:7.1f} us/model call")
PY
    if [ -n "$jit" ]; then python3 "$here/compiles-in-window.py" "$w/jit-$r-$(basename "$b").xml" "$u0" "$u1" 8 | sed 's/^/  /'; fi
  done
done
kill $stub 2>/dev/null; wait $stub 2>/dev/null
echo "workdir: $w"

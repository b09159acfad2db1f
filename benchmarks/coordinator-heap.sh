#!/usr/bin/env bash
# The coordinator command + one worker (capacity C, job size 1) + the stub model (LAT ms) over an N-vignette
# arithmetic suite, SQLite store. Every EVERY s: answers stored, and (HIST=1) a class histogram of the
# coordinator (jcmd GC.class_histogram: a full GC, then the live heap). JOPTS: the coordinator JVM's flags
# (-Xlog:gc:file=gc.log for heap after GC, -Xmx...); CARGS: more coordinator options (--epochs 5). Prints the coordinator's wall, user, sys seconds and peak RSS (KB).
# Take the CPU lock around it: flock /tmp/panoptes-cpu.lock benchmarks/coordinator-heap.sh worker-cli/target/worker.jar 100000 /tmp/heap
# usage: coordinator-heap.sh JAR N OUTDIR
set -u
jar=$(readlink -f "$1"); N=$2; out=$3; C=${C:-64}; LAT=${LAT:-20}
[ -e "$out" ] && { echo "$out exists: give a directory that does not" >&2; exit 2; }; mkdir -p "$out"; cd "$out"
python3 - "$N" <<'PY'
import json, sys, random
n = int(sys.argv[1]); r = random.Random(7)
with open("suite.jsonl", "w") as f:
    for i in range(n):
        a, b = r.randint(1, 999), r.randint(1, 999)
        f.write(json.dumps({"id": f"q{i}", "prompt": f"What is {a} + {b}?", "expected": str(a + b)}) + "\n")
PY
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sport=$(port); java -jar "$jar" stub-model --listen 127.0.0.1:$sport --latency ${LAT}ms --concurrency 512 > stub.log 2>&1 & stub=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:$sport/v1/models >/dev/null && break; sleep 0.1; done
cport=$(port)
/usr/bin/time -f "%e %U %S %M" -o coord.time java ${JOPTS:-} -jar "$jar" coordinator --listen 127.0.0.1:$cport --suite suite.jsonl --db p.db \
   --model stub-arithmetic --scorer exact --job-size 1 ${CARGS:-} > coord.log 2>&1 & co=$!
sleep 1; java -jar "$jar" --coordinator 127.0.0.1:$cport --model-api http://127.0.0.1:$sport/v1 --capacity $C > worker.log 2>&1 & wo=$!
cpid=""
i=0
while kill -0 $co 2>/dev/null; do
  [ -z "$cpid" ] && cpid=$(pgrep -P $co java || true)
  if [ -n "$cpid" ]; then
    stored=$(sqlite3 p.db 'select count(*) from panoptes_records' 2>/dev/null || echo '?')
    [ "${HIST:-1}" = 1 ] && jcmd $cpid GC.class_histogram > h.$i.txt 2>/dev/null
    echo "t=$i stored=$stored live=$(tail -1 h.$i.txt)" >> samples.txt
    i=$((i+1))
  fi
  sleep ${EVERY:-3}
done
wait $co
kill -TERM $wo $stub 2>/dev/null; wait 2>/dev/null
echo "coord: $(tail -1 coord.time)"; cat samples.txt | tail -5

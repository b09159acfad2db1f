#!/usr/bin/env bash
# Tests panoptes-workers.sbatch without Slurm: two array tasks run the script as Slurm would
# (its environment, and a fake srun that records each step and runs it), with the stub model
# API as each task's model server and a real coordinator. Task 0 gets SIGTERM mid-run, as
# Slurm's --signal sends it before the wall-time limit: it must drain and exit 0, and the run
# must still complete with every answer stored once. Takes about a minute; not part of `mvn verify`.
#
#   mvn -B -q package -DskipTests && bash deploy/slurm/test-slurm-steps.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
jar="$PWD/worker-cli/target/worker.jar"
script="$PWD/deploy/slurm/panoptes-workers.sbatch"
[ -f "$jar" ] || { echo "build first: mvn -B -q package -DskipTests" >&2; exit 2; }
work="$(mktemp -d /tmp/panoptes-slurm-test.XXXXXX)"
pids=()
model_ports=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

# A fake srun: records its arguments, drops its options and runs the step's command.
cat > "$work/srun" <<'FAKE'
#!/usr/bin/env bash
echo "srun $*" >> "$SRUN_LOG"
while [ "$#" -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
exec "$@"
FAKE
chmod +x "$work/srun"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

coord_port="$(free_port)"
java -jar "$jar" coordinator --suite evals/math.jsonl --db "$work/run.db" --model stub-arithmetic \
  --scorer numeric --listen "127.0.0.1:$coord_port" --job-size 2 --wait-for-workers 2m --no-progress \
  > "$work/coordinator.log" 2>&1 &
coordinator=$!
pids+=("$coordinator")

start_task() {
  local task="$1" port
  port="$(free_port)"
  SLURM_JOB_ID=4242 SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID="$task" SRUN="$work/srun" SRUN_LOG="$work/srun.log" \
    PANOPTES_COORDINATOR="127.0.0.1:$coord_port" PANOPTES_JAR="$jar" PANOPTES_REQUESTS=2 PANOPTES_GRACE=20s \
    MODEL_PORT="$port" MODEL_HEALTH_URL="http://127.0.0.1:$port/v1/models" MODEL_HEALTH_TIMEOUT=60 \
    MODEL_SERVER_CMD="java -jar $jar stub-model --listen 127.0.0.1:$port --latency 1s" \
    bash "$script" > "$work/task-$task.log" 2>&1 &
  started="$!"
  pids+=("$started")
  model_ports+=("$port")
}
start_task 0
task0="$started"
start_task 1
task1="$started"

# Task 0 stops once it has answered something: Slurm's SIGTERM before the wall-time limit.
for _ in $(seq 1 120); do
  grep -q "registered with coordinator" "$work/task-0.log" 2>/dev/null && break
  sleep 0.5
done
sleep 3
kill -TERM "$task0"
wait "$task0" && code0=0 || code0=$?
[ "$code0" -eq 0 ] || fail "task 0 exited $code0 after SIGTERM (expected 0: drained)"
grep -q "SIGTERM (wall-time limit near, or scancel): draining the worker" "$work/task-0.log" \
  || fail "task 0 did not say it drained"

wait "$coordinator" && codec=0 || codec=$?
[ "$codec" -eq 0 ] || fail "the coordinator exited $codec (expected 0: the run complete)"
grep -q "answers:     40 of 40 stored" "$work/coordinator.log" || fail "not every answer was stored"
grep -q "slurm-4242-0" "$work/coordinator.log" || fail "task 0's worker never registered"
grep -q "slurm-4242-1" "$work/coordinator.log" || fail "task 1's worker never registered"
[ "$(grep -c -- "--overlap --ntasks=1" "$work/srun.log")" -eq 4 ] \
  || fail "expected 4 steps launched through srun (a model server and a worker per task)"

# The array is ended with scancel once the run is complete: task 1 drains and stops its server.
kill -TERM "$task1"
wait "$task1" && code1=0 || code1=$?
[ "$code1" -eq 0 ] || fail "task 1 exited $code1 after SIGTERM"
for port in "${model_ports[@]}"; do
  if pgrep -f "stub-model --listen 127.0.0.1:$port " >/dev/null; then fail "the model server on $port outlived its task"; fi
done
echo "PASS: two array tasks, one stopped mid-run; 40 of 40 answers stored (once each: one record per vignette); every step ended"

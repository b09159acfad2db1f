#!/usr/bin/env bash
# Tests the container image by what it holds, without a container runtime (none works on the
# machines this project is built on: `podman run` fails there on setrlimit and cgroups):
#
#   deploy/image/test-image.sh [IMAGE_TAR]
#
# IMAGE_TAR defaults to worker-cli/target/panoptes-image.tar, built first when missing with
# `mvn -B -q -Pimage -pl worker-cli -am package -DskipTests`. The script unpacks the image's
# layers, in the order its manifest lists them, into a root file system, and runs the image's
# own entry point, environment, working directory and user (from its config) in that root with
# bubblewrap, the JVM as PID 1 of its PID namespace as in a container, sharing the host's
# loopback. From the image it runs a stub model API, a coordinator with a token and its admin
# endpoint, and two workers, and checks that:
#   - the run completes: the coordinator exits 0 and the store holds one record per vignette
#     (40, for evals/math.jsonl, bind-mounted read-only at /suite as a volume would be);
#   - the processes run as the image's non-root user, with the JVM's heap sized from memory;
#   - the health signal (/app/bin/panoptes-health, the probe the Kubernetes manifests use)
#     passes for the coordinator (/status) and the workers (/metrics) with the token, and fails
#     without it;
#   - SIGTERM makes a worker drain and exit 0 (what Kubernetes sends before
#     terminationGracePeriodSeconds runs out): worker 1 in the middle of the run, which still
#     completes, worker 2 after it.
# Needs root (to unpack the layers with their owners and to switch to the image's user), tar, jq
# and bubblewrap (installed with apt-get when missing). Takes about a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

image=${1:-$repo/worker-cli/target/panoptes-image.tar}
if [ "$(id -u)" -ne 0 ]; then
  echo "test-image: run as root: unpacking the layers keeps their owners, and the processes switch to the image's user" >&2
  exit 2
fi
missing=()
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -s "$image" ]; then
  if [ "$#" -gt 0 ]; then
    echo "test-image: no image at $image" >&2
    exit 2
  fi
  echo "test-image: building the image (mvn -Pimage)" >&2
  mvn -B -q -Pimage -pl worker-cli -am package -DskipTests
fi

work=$(mktemp -d /tmp/panoptes-image-test.XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "test-image: FAILED: $*" >&2
  for log in "$work"/*.log; do
    [ -s "$log" ] && { echo "--- $(basename "$log") (last lines)" >&2; tail -n 20 "$log" >&2; }
  done
  exit 1
}

# --- unpack: manifest.json names the config and the layers, base first -----------------------
mkdir "$work/image" "$work/rootfs"
tar -xf "$image" -C "$work/image"
config="$work/image/$(jq -r '.[0].Config' "$work/image/manifest.json")"
jq -r '.[0].Layers[]' "$work/image/manifest.json" > "$work/layers"
while IFS= read -r layer; do
  # tar detects gzip itself; --numeric-owner keeps the image's uids whatever this host's names.
  tar -xf "$work/image/$layer" -C "$work/rootfs" --numeric-owner --warning=no-unknown-keyword
done < "$work/layers"
chmod 755 "$work" "$work/rootfs"
# The mount point of the suite's volume (bwrap, run as the image's user, cannot make it in /).
mkdir -p "$work/rootfs/suite"
echo "test-image: unpacked $(wc -l < "$work/layers") layers of $image"

user=$(jq -r '.config.User // ""' "$config")
workdir=$(jq -r '.config.WorkingDir // "/"' "$config")
mapfile -t entrypoint < <(jq -r '.config.Entrypoint[]' "$config")
mapfile -t env < <(jq -r '.config.Env[]?' "$config")
uid=${user%%:*}
gid=${user#*:}
[ -n "$uid" ] && [ "$uid" != 0 ] && [ "$uid" != root ] || fail "the image runs as root (User '$user'); it should name a non-root user"
[[ "$uid" =~ ^[0-9]+$ ]] || fail "the image's user '$user' is not numeric; Kubernetes' runAsNonRoot cannot check a name"
[ "${entrypoint[0]:-}" = java ] || fail "the entry point is not the JVM: ${entrypoint[*]}"
echo "test-image: entry point ${entrypoint[*]}; user $user; working directory $workdir"

# run NAME [--env K=V]... -- ARGS...: the image's entry point with ARGS, in the background, as a
# container would run it; its pid (of the outer bwrap, the JVM's parent) in pid_NAME.
setenv_args() {
  local kv
  for kv in "${env[@]}"; do printf '%s\0%s\0%s\0' --setenv "${kv%%=*}" "${kv#*=}"; done
}
run_in_image() {
  local name=$1; shift
  local extra=()
  while [ "$1" != -- ]; do extra+=(--setenv "${2%%=*}" "${2#*=}"); shift 2; done
  shift
  local base=()
  mapfile -d '' -t base < <(setenv_args)
  setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
    bwrap --bind "$work/rootfs" / --proc /proc --dev /dev --tmpfs /tmp \
      --ro-bind "$repo/evals" /suite \
      --unshare-pid --as-pid-1 --unshare-ipc --unshare-uts --die-with-parent --new-session \
      --clearenv "${base[@]}" --setenv HOME /home/panoptes "${extra[@]}" --chdir "$workdir" \
      -- "$@" > "$work/$name.log" 2>&1 &
  eval "pid_$name=$!"
  pids+=("$!")
}
# exec_in_image ARGS...: a command in the image, in the foreground (as a probe is run).
exec_in_image() {
  local base=()
  mapfile -d '' -t base < <(setenv_args)
  setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
    bwrap --bind "$work/rootfs" / --proc /proc --dev /dev --tmpfs /tmp --ro-bind "$repo/evals" /suite \
      --unshare-pid --die-with-parent --clearenv "${base[@]}" --setenv HOME /home/panoptes \
      --chdir "$workdir" -- "$@"
}
# await LOG REGEX SECONDS: the first match of REGEX (grep -E -o) in LOG, once it is there.
await() {
  local log=$1 regex=$2 seconds=$3 end match
  end=$((SECONDS + seconds))
  while [ "$SECONDS" -lt "$end" ]; do
    if match=$(grep -E -o -m1 "$regex" "$log" 2>/dev/null); then
      echo "$match"
      return 0
    fi
    sleep 0.2
  done
  fail "no '$regex' in $(basename "$log") within $seconds s"
}

token="image-test-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

# --- the facts of the image itself ---------------------------------------------------------------
exec_in_image id -u | grep -qx "$uid" || fail "a process in the image does not run as uid $uid"
exec_in_image bwrap --version >/dev/null || fail "bubblewrap (the workers' tool sandbox) is not in the image"
heap=$(exec_in_image "${entrypoint[@]:0:${#entrypoint[@]}-2}" -XX:+PrintFlagsFinal -version 2>/dev/null \
  | awk '$2 == "MaxRAMPercentage" {print $4}')
[ "${heap%%.*}" -ge 50 ] || fail "the entry point's JVM does not size its heap from the container's memory (MaxRAMPercentage $heap)"
echo "test-image: runs as uid $uid, has bwrap, JVM MaxRAMPercentage=$heap"

# --- a run: stub model, coordinator, two workers, all from the image -----------------------------
# 300 ms an answer: the run lasts long enough for a worker to be stopped in the middle of it.
run_in_image stub -- "${entrypoint[@]}" stub-model --listen 127.0.0.1:0 --latency 300ms
model_api=$(await "$work/stub.log" 'http://127\.0\.0\.1:[0-9]+/v1' 60)

run_in_image coordinator --env "PANOPTES_TOKEN=$token" -- "${entrypoint[@]}" coordinator \
  --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --suite /suite/math.jsonl --db /data/math.db \
  --model stub-arithmetic --scorer numeric --wait-for-workers 2m --admin-linger 15s \
  --summary-json /data/summary.json
coordinator=$(await "$work/coordinator.log" 'listening for workers on 127\.0\.0\.1:[0-9]+' 60 | sed 's/.* //')
coordinator_admin=$(await "$work/coordinator.log" 'admin endpoint on http://127\.0\.0\.1:[0-9]+' 60 | sed 's/.*://')
echo "test-image: model API $model_api, coordinator $coordinator, its admin endpoint port $coordinator_admin"

for w in 1 2; do
  run_in_image "worker$w" --env "PANOPTES_TOKEN=$token" -- "${entrypoint[@]}" \
    --coordinator "$coordinator" --model-api "$model_api" --model stub-arithmetic --id "image-worker-$w" \
    --metrics 127.0.0.1:0 --grace 30s
done
worker_admin=$(await "$work/worker1.log" 'admin endpoint on http://127\.0\.0\.1:[0-9]+' 60 | sed 's/.*://')

# The health signal, run in the image as the orchestrator's exec probe would.
exec_in_image env "PANOPTES_TOKEN=$token" /app/bin/panoptes-health "$coordinator_admin" /status \
  || fail "the coordinator's health check (/status with the token) failed"
exec_in_image env "PANOPTES_TOKEN=$token" /app/bin/panoptes-health "$worker_admin" \
  || fail "worker 1's health check (/metrics with the token) failed"
if exec_in_image /app/bin/panoptes-health "$coordinator_admin" /status 2>/dev/null; then
  fail "the health check passed without the token: the admin endpoint is open"
fi
echo "test-image: health checks pass with the token (coordinator /status, worker /metrics), fail without"

# stop_worker N: SIGTERM to worker N's JVM (PID 1 in its namespace, the outer bwrap's child), as
# Kubernetes sends it; it must drain (answer what it holds) and exit 0 within its --grace.
stop_worker() {
  local pid_var="pid_worker$1" jvm rc end
  jvm=$(pgrep -P "${!pid_var}" | head -n1)
  [ -n "$jvm" ] || fail "worker $1's JVM is gone before SIGTERM"
  kill -TERM "$jvm"
  end=$((SECONDS + 60))
  while kill -0 "${!pid_var}" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
  wait "${!pid_var}" && rc=0 || rc=$?
  [ "$rc" -eq 0 ] || fail "worker $1 exited $rc on SIGTERM; a drained worker exits 0"
  grep -q 'stopped cleanly, no job left unanswered' "$work/worker$1.log" \
    || fail "worker $1 did not report a clean drain after SIGTERM"
}

# Worker 1 is stopped while the run goes on, as a pod that is scaled away or evicted.
sandboxes=$(grep -E -o -m1 '(cannot run sandboxes|sandboxes: up to).*' "$work/worker1.log" || true)
echo "test-image: worker 1 on its tool sandboxes: ${sandboxes:-nothing logged}"
# The summary is written when the run ends: its absence says the run is still going.
[ ! -e "$work/rootfs/data/summary.json" ] || fail "the run ended before worker 1 could be stopped in its middle"
stop_worker 1
echo "test-image: worker 1, sent SIGTERM mid-run, drained and exited 0"

# The coordinator exits when every job is answered (after --admin-linger).
end=$((SECONDS + 180))
while kill -0 "$pid_coordinator" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.5; done
kill -0 "$pid_coordinator" 2>/dev/null && fail "the run did not complete within 180 s"
wait "$pid_coordinator" && rc=0 || rc=$?
[ "$rc" -eq 0 ] || fail "the coordinator exited $rc"
for w in 1 2; do
  grep -q 'registered' "$work/worker$w.log" || fail "worker $w never registered"
done
records=$(exec_in_image "${entrypoint[@]}" results --db /data/math.db | grep -c '^{' || true)
[ "$records" -eq 40 ] || fail "the store holds $records records; the suite has 40 vignettes"
[ -s "$work/rootfs/data/summary.json" ] || fail "the coordinator wrote no summary (--summary-json)"
echo "test-image: the run completed: coordinator exit 0, 40 records stored, both workers registered"

stop_worker 2
echo "test-image: worker 2, sent SIGTERM after the run, drained and exited 0"
echo "test-image: OK ($SECONDS s)"

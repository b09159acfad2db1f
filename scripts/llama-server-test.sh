#!/usr/bin/env bash
# Runs Panoptes against a real llama.cpp server (not the project's stub): the test of issue 30's
# "against a real server". Not part of .ci/run (the build alone takes about 8 minutes on 2 cores).
#
#   bash scripts/llama-server-test.sh
#
# What it does, each step cached under ${PANOPTES_LLAMA_CACHE:-~/.cache/panoptes/llama}:
#  1. installs the npm package node-llama-cpp@3.21.1, which carries llama.cpp's full source as
#     llama/gitRelease.bundle (a git bundle), and clones that bundle;
#  2. builds llama-server from it with Debian's cmake, g++ and ninja (-DLLAMA_CURL=OFF
#     -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF), under `nice`; installs those, git, npm and
#     python3-numpy with apt-get when missing (as root or through sudo);
#  3. writes a tiny LLaMA-architecture model (scripts/tiny-llama-gguf.py: random weights, the real
#     LLaMA tokenizer from the source's models/ggml-vocab-llama-spm.gguf) with the source's gguf-py;
#  4. starts llama-server on a free loopback port and runs the product's CLI against it:
#       eval --suite evals/math.jsonl (chat API): every vignette answered and stored, exit 0
#         (the answers are a random model's: what is checked is the request path, not accuracy);
#       eval --task evals/arithmetic-task.yaml (log-likelihood): refused by the worker's
#         capability check, its message naming the server's shortfall (no prompt
#         log-probabilities), no job done, and eval ends at that first refusal with exit 8 (no
#         other worker can connect to an eval, so it does not wait for one).
# Exits 0 when both outcomes are as expected, non-zero (with what differed) otherwise.
# Builds the worker jar when it is missing (mvn -o package of worker-cli).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE=${PANOPTES_LLAMA_CACHE:-$HOME/.cache/panoptes/llama}
VERSION=3.21.1
JAR=$ROOT/worker-cli/target/worker.jar
MODEL=tiny-llama
mkdir -p "$CACHE"

say() { echo "llama-server-test: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# 0. Tools.
missing=()
for t in cmake:cmake g++:g++ ninja:ninja-build git:git npm:npm curl:curl; do
  command -v "${t%%:*}" >/dev/null 2>&1 || missing+=("${t#*:}")
done
PYTHON=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PYTHON=$p; break; fi
done
[ -n "$PYTHON" ] || { missing+=(python3-numpy); PYTHON=/usr/bin/python3; }
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  command -v apt-get >/dev/null 2>&1 || fail "needs ${missing[*]} and this is not a Debian-like system: install them"
  say "installing ${missing[*]} (apt-get)"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 1. llama.cpp's source, from the npm package.
BUNDLE=$CACHE/node_modules/node-llama-cpp/llama/gitRelease.bundle
if [ ! -f "$BUNDLE" ] || ! grep -q "\"version\": \"$VERSION\"" "$CACHE/node_modules/node-llama-cpp/package.json"; then
  say "installing node-llama-cpp@$VERSION (npm) into $CACHE"
  [ -f "$CACHE/package.json" ] || echo '{"private": true}' > "$CACHE/package.json"
  (cd "$CACHE" && npm install --no-audit --no-fund --ignore-scripts "node-llama-cpp@$VERSION" >/dev/null)
  rm -rf "$CACHE/src" "$CACHE/build"
fi
if [ ! -d "$CACHE/src/.git" ]; then
  git clone -q "$BUNDLE" "$CACHE/src"
fi
say "llama.cpp $(cat "$CACHE/node_modules/node-llama-cpp/llama/llama.cpp.info.json" | tr -d ' \n')"

# 2. llama-server, built once.
SERVER=$CACHE/build/bin/llama-server
if [ ! -x "$SERVER" ]; then
  say "building llama-server (about 8 minutes on 2 cores; cached in $CACHE/build)"
  cmake -S "$CACHE/src" -B "$CACHE/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >/dev/null
  nice -n 10 cmake --build "$CACHE/build" --target llama-server >"$CACHE/build.log" 2>&1 \
    || { tail -20 "$CACHE/build.log" >&2; fail "the llama-server build failed (log: $CACHE/build.log)"; }
fi

# 3. The tiny model.
GGUF=$CACHE/tiny-llama.gguf
if [ ! -f "$GGUF" ] || [ "$ROOT/scripts/tiny-llama-gguf.py" -nt "$GGUF" ]; then
  PYTHONPATH=$CACHE/src/gguf-py "$PYTHON" "$ROOT/scripts/tiny-llama-gguf.py" \
    "$CACHE/src/models/ggml-vocab-llama-spm.gguf" "$GGUF" >&2
fi

# The product.
if [ ! -f "$JAR" ]; then
  say "building the worker jar"
  mvn -B -q -o -pl worker-cli -am package -DskipTests
fi

# 4. The server, on a free loopback port, and the product against it.
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
PORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$SERVER" -m "$GGUF" --alias "$MODEL" --host 127.0.0.1 --port "$PORT" -c 2048 -np 2 -t 2 \
  --chat-template chatml >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
API=http://127.0.0.1:$PORT/v1
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; fail "llama-server exited at start"; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { tail -20 "$WORK/server.log" >&2; fail "llama-server not healthy after 60 s"; }
say "llama-server up at $API: $(curl -s "$API/models" | head -c 200)"

status=0
# Generation through the chat API: every vignette answered, whatever the answers are.
set +e
java -jar "$JAR" eval --suite evals/math.jsonl --model "$MODEL" --model-api "$API" --max-tokens 8 \
  --temperature 0 --db "$WORK/gen.db" >"$WORK/gen.out" 2>"$WORK/gen.err"
gen_exit=$?
set -e
if [ "$gen_exit" -eq 0 ] && grep -q "answers:     40 of 40 stored" "$WORK/gen.out"; then
  say "PASS chat generation: 40 of 40 answered and stored; $(grep -m1 -A1 'accuracy' "$WORK/gen.out" | tail -1 | sed 's/^ *//')"
else
  cat "$WORK/gen.out" "$WORK/gen.err" >&2
  say "FAIL chat generation: exit $gen_exit, expected 0 with 40 of 40 stored"
  status=1
fi

# Multiple choice by log-likelihood: the worker's capability check refuses this server, and eval
# (whose one worker no other can replace) ends at that first refusal with exit 8, keeping nothing
# stored. The 120 s bound only keeps a regression (a run that waits) from hanging the script.
set +e
timeout 120 java -jar "$JAR" eval --task evals/arithmetic-task.yaml --model "$MODEL" --model-api "$API" \
  --db "$WORK/mc.db" >"$WORK/mc.out" 2>"$WORK/mc.err"
mc_exit=$?
set -e
if [ "$mc_exit" -eq 8 ] && grep -q "refuses these jobs for good.*does not return prompt log-probabilities" "$WORK/mc.err" \
    && ! grep -q "progress: [1-9][0-9]*/" "$WORK/mc.err" && ! grep -q "answers: .*[1-9][0-9]* of" "$WORK/mc.out"; then
  say "PASS log-likelihood refused by the worker, exit 8, no job done: $(grep -m1 -o 'the model API at .*does not return prompt log-probabilities[^.]*' "$WORK/mc.err")"
else
  cat "$WORK/mc.out" "$WORK/mc.err" >&2
  say "FAIL log-likelihood: exit $mc_exit, expected 8 with the capability check's refusal and no job done"
  status=1
fi
[ "$status" -eq 0 ] && say "both outcomes as expected" || say "see above"
exit "$status"

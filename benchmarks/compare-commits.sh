#!/usr/bin/env bash
# Measures the dispatch benchmark of two builds side by side, in one invocation, so that the
# machine's noise falls on both alike: BASE (a commit, built in a temporary worktree) and the
# working tree's own build (run `mvn -B -q package -DskipTests` first).
#
#   benchmarks/compare-commits.sh BASE [ROUNDS] [K]      e.g.  benchmarks/compare-commits.sh HEAD~5 6 64
#
# Each round runs `benchmarks.jar dispatch --k K --runs 1` of BASE, then of the working tree,
# alternating which goes first; each such run measures its own raw-NIO floor as well. It prints
# every round and then the medians of jobs/s, p50, the Panoptes/floor ratio and the
# coordinator's CPU per job (user + system, from /proc), and new/base for each.
set -euo pipefail
base=${1:?usage: $0 BASE [ROUNDS] [K]}
rounds=${2:-6}
k=${3:-64}
top=$(git rev-parse --show-toplevel)
new_jar="$top/benchmarks/target/benchmarks.jar"
[ -f "$new_jar" ] || { echo "build the working tree first: mvn -B -q package -DskipTests" >&2; exit 2; }
base_sha=$(git rev-parse --short "$base")
work=$(mktemp -d /tmp/panoptes-compare-XXXXXX)
trap 'git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$top" worktree add -q --detach "$work/base" "$base"
(cd "$work/base" && mvn -B -q package -DskipTests >/dev/null 2>&1)
base_jar="$work/base/benchmarks/target/benchmarks.jar"

run() { # jar -> "jobs/s p50 ratio coordinator-cpu-us-per-job"
    java -jar "$1" dispatch --k "$k" --runs 1 --jit-warmup-ms 3000 2>/dev/null \
        | awk -F'|' -v k="$k" '$2 ~ "^ "k" $" {
              gsub(/[ ,]/, "", $3); sub(/\(.*/, "", $3);
              gsub(/ /, "", $4); sub(/\(.*/, "", $4);
              gsub(/ /, "", $9); sub(/\(.*/, "", $9);
              gsub(/ /, "", $10); sub(/\(.*/, "", $10);
              print $3, $4, $9, $10 }'
}

echo "dispatch K=$k, $rounds rounds: base $base_sha vs working tree $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet || echo '+changes'), load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$work/base.txt"; : > "$work/new.txt"
for ((i = 1; i <= rounds; i++)); do
    if (( i % 2 )); then order="base new"; else order="new base"; fi
    for which in $order; do
        if [ "$which" = base ]; then r=$(run "$base_jar"); else r=$(run "$new_jar"); fi
        echo "$r" >> "$work/$which.txt"
        echo "round $i $which: jobs/s p50us panoptes/floor% coordinator-cpu-us/job = $r (load $(cut -d' ' -f1 /proc/loadavg))"
    done
done
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for col in 1 2 3 4; do
    b=$(cut -d' ' -f$col "$work/base.txt" | median); n=$(cut -d' ' -f$col "$work/new.txt" | median)
    name=$(echo "jobs/s p50us panoptes/floor% cpu-us/job" | cut -d' ' -f$col)
    awk -v name="$name" -v b="$b" -v n="$n" 'BEGIN { printf "median %-16s base %12.2f  new %12.2f  new/base %.3f\n", name, b, n, n / b }'
done

#!/usr/bin/env bash
# The heap a run's summary figures hold (BENCHMARKS.md section 20): BEFORE.jar reads the run's rows
# into a list (loadFigures), AFTER.jar streams them (RunDataLoader.stats). DB: a result database, e.g.
# the p.db that coordinator-heap.sh leaves. Serial GC, so that used heap after System.gc() is the live heap.
# Take the CPU lock around it: flock /tmp/panoptes-cpu.lock benchmarks/summary-heap.sh before.jar after.jar /tmp/heap/p.db
# usage: summary-heap.sh BEFORE.jar AFTER.jar DB
set -eu
before=$(readlink -f "$1"); after=$(readlink -f "$2"); db=$(readlink -f "$3")
classes=$(mktemp -d); trap 'rm -rf "$classes"' EXIT
javac -cp "$after" -d "$classes" "$(dirname "$0")/summary-heap/Retained.java"
java -Xmx1g -XX:+UseSerialGC -cp "$before:$classes" Retained before "$db" 2>&1 | grep -v SLF4J
java -Xmx1g -XX:+UseSerialGC -cp "$after:$classes" Retained after "$db" 2>&1 | grep -v SLF4J

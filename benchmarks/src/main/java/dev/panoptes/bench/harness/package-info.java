/**
 * What every measurement stands on: starting child JVMs and talking to them in {@code Kv} lines,
 * reading the machine and the processes' CPU, running perf, jcmd and JFR, summarising runs as
 * median and spread, and writing the Markdown report. Depends on no other package of the benchmarks.
 */
package dev.panoptes.bench.harness;

/**
 * The benchmarks' command line: {@link dev.panoptes.bench.BenchMain} lists one command class per
 * measurement, each a {@link dev.panoptes.bench.BenchCommand} (the harness: shared options, the
 * context, the report), with option mixins for the groups several share. {@code FakeWorker} stays
 * here by name only, as the entry point harnesses outside this module launch.
 */
package dev.panoptes.bench;

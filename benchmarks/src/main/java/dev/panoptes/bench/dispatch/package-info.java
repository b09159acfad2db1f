/**
 * Measurement 1, dispatch throughput and latency over one connection, with the raw-NIO echo floor
 * it is compared with, its profiled rounds, and the per-frame codec cost behind it.
 */
package dev.panoptes.bench.dispatch;

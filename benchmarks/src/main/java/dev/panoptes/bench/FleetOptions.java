package dev.panoptes.bench;

import picocli.CommandLine.Option;

/**
 * The fleet of real workers against the stub model, for the measurements that run one (e2e,
 * ratelimit); a picocli mixin. Capacity is not here: its default differs per measurement.
 */
final class FleetOptions {
    @Option(names = "--workers", description = "Worker processes (default: ${DEFAULT-VALUE}).", defaultValue = "4")
    int workers;

    @Option(names = "--latency-ms", description = "The stub model's latency per call (default: ${DEFAULT-VALUE}).",
            defaultValue = "50")
    long latencyMs;
}

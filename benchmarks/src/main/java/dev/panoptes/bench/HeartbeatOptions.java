package dev.panoptes.bench;

import picocli.CommandLine.Option;

/** The heartbeat of both sides, for the measurements that wait on it (scale, failure); a picocli mixin. */
final class HeartbeatOptions {
    @Option(names = "--heartbeat-ms", description = "Heartbeat interval of both sides (default: ${DEFAULT-VALUE}).",
            defaultValue = "1000")
    long heartbeatMs;

    @Option(names = "--heartbeat-timeout-ms", description = "The coordinator's heartbeat timeout"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "3000")
    long heartbeatTimeoutMs;
}

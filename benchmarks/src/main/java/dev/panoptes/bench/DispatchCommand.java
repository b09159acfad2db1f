package dev.panoptes.bench;

import dev.panoptes.bench.dispatch.DispatchBench;

import picocli.CommandLine.Command;

/** {@code dispatch}: measurement 1a, the coordinator against the minimal fast fake worker. */
@Command(name = "dispatch", mixinStandardHelpOptions = true,
        description = "1a. Dispatch throughput and latency with the minimal fast fake worker, next to the raw"
                + " echo floor.")
final class DispatchCommand extends AbstractDispatchCommand {
    DispatchCommand() {
        super(DispatchBench.Mode.FAKE);
    }
}

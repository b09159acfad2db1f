package dev.panoptes.bench;

import dev.panoptes.bench.dispatch.DispatchBench;

import picocli.CommandLine.Command;

/** {@code floor}: the raw-NIO echo floor of the dispatch measurements, alone. */
@Command(name = "floor", mixinStandardHelpOptions = true,
        description = "The raw-NIO echo floor alone: frames of the assign's and result's sizes, no JSON.")
final class FloorCommand extends AbstractDispatchCommand {
    FloorCommand() {
        super(DispatchBench.Mode.FLOOR);
    }
}

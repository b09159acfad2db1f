package dev.panoptes.bench;

import dev.panoptes.bench.dispatch.DispatchBench;

import picocli.CommandLine.Command;

/** {@code dispatch-session}: measurement 1b, the coordinator against the real WorkerSession. */
@Command(name = "dispatch-session", mixinStandardHelpOptions = true,
        description = "1b. Dispatch throughput and latency with the real WorkerSession and a no-op runner,"
                + " next to the raw echo floor.")
final class DispatchSessionCommand extends AbstractDispatchCommand {
    DispatchSessionCommand() {
        super(DispatchBench.Mode.SESSION);
    }
}

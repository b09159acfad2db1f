package dev.panoptes.bench;

import dev.panoptes.bench.dispatch.CodecBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine.Command;

/** {@code codec}: the per-frame cost of the wire work, in one thread of this JVM ({@link CodecBench}). */
@Command(name = "codec", mixinStandardHelpOptions = true,
        description = "Per-frame cost of the wire work of each side (encode assign, decode result, ...), in one"
                + " thread: the evidence behind the dispatch profile.")
final class CodecCommand extends BenchCommand {
    CodecCommand() {
        super(5);
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return CodecBench.run(report, runs(), 2000, 1000);
    }
}

package dev.panoptes.bench.model;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.demo.StubModelServer;

import java.io.BufferedReader;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The product's {@link StubModelServer} (an OpenAI-compatible chat-completions server with a
 * fixed latency) in its own JVM, for the end-to-end measurement.
 *
 * <p>Arguments: {@code latencyMs threads [maxConcurrent]} (beyond {@code maxConcurrent}
 * completions in flight it answers 429). Replies {@code READY url=..}; command {@code count}
 * replies {@code COUNT requests=.. throttled=..}.
 */
public final class StubModelNode {
    private StubModelNode() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("WARN");
        try (StubModelServer stub = StubModelServer.start(new InetSocketAddress("127.0.0.1", 0),
                Duration.ofMillis(Long.parseLong(args[0])), Integer.parseInt(args[1]),
                args.length > 2 ? Integer.parseInt(args[2]) : 0)) {
            ChildIo.reply("READY", "url", stub.baseUrl());
            BufferedReader commands = ChildIo.commands();
            while (true) {
                Kv cmd = ChildIo.nextCommand(commands);
                if (cmd.tag().equals("count")) {
                    ChildIo.reply("COUNT", "requests", stub.requestCount(), "throttled", stub.throttledCount());
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("stub model", e);
        }
    }
}

package dev.panoptes.bench.fake;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.worker.WorkerOptions;
import dev.panoptes.worker.Workers;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Real workers in one JVM: each argument after the first two starts one
 * {@link dev.panoptes.worker.WorkerSession} (through {@link Workers#serveWorker}), on its own
 * thread and connection, with a {@link BenchRunners benchmark runner} in place of a model.
 *
 * <p>Arguments: {@code port heartbeatMs id:capacity:runner...}, where runner is {@code echo},
 * {@code sleepMICROS} or {@code hold}. Replies {@code SESSION-ENDED id=..} when a session ends.
 * The JVM ends when its stdin closes (or when it is killed, which is the point of some runs).
 */
public final class SessionWorker {
    private SessionWorker() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("INFO");
        InetSocketAddress coordinator = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0]));
        WorkerOptions options = WorkerOptions.defaults().withHeartbeat(Duration.ofMillis(Long.parseLong(args[1])))
                .withTls(BenchTls.clientContext());
        for (int i = 2; i < args.length; i++) {
            String[] spec = args[i].split(":");
            String id = spec[0];
            int capacity = Integer.parseInt(spec[1]);
            var runner = BenchRunners.asyncNamed(spec[2]);
            Thread t = new Thread(() -> {
                String error = "none";
                try {
                    Workers.serveWorker(coordinator, id, capacity, runner, options);
                } catch (Exception e) {
                    error = e.toString();
                }
                ChildIo.reply("SESSION-ENDED", "id", id, "error", error);
            }, "session-" + id);
            t.setDaemon(true);
            t.start();
        }
        ChildIo.reply("STARTED", "sessions", args.length - 2);
        // Runs until the parent closes stdin or kills this JVM.
        try {
            while (System.in.read() >= 0) {
                // No commands.
            }
        } catch (java.io.IOException e) {
            // Treated as a close.
        }
        Runtime.getRuntime().halt(0);
    }
}

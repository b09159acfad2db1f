package dev.panoptes.bench.cluster;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;

import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The coordinator of the connection-scale measurement, in its own JVM: a real
 * {@link WorkerServer} with a short heartbeat (so that heartbeats are real traffic) and nothing
 * else, answering questions about itself.
 *
 * <p>Commands: {@code stats} (heap after a full GC, threads, pool size, registrations and losses),
 * {@code wait-pool n=N timeoutMs=T}, {@code cpu windowMs=W} (process and per-thread CPU over the
 * window). Arguments: {@code heartbeatMs heartbeatTimeoutMs}.
 */
public final class ScaleCoordinator {
    private ScaleCoordinator() {
    }

    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("INFO");
        try {
            AtomicInteger registered = new AtomicInteger();
            AtomicInteger lost = new AtomicInteger();
            AtomicInteger rejected = new AtomicInteger();
            AtomicLong firstRegisteredNanos = new AtomicLong();
            AtomicLong lastRegisteredNanos = new AtomicLong();
            ServerOptions options = ServerOptions.builder()
                    .bind(new InetSocketAddress("127.0.0.1", 0))
                    .heartbeatInterval(Duration.ofMillis(Long.parseLong(args[0])))
                    .heartbeatTimeout(Duration.ofMillis(Long.parseLong(args[1])))
                    // Every worker of the measurement comes from 127.0.0.1, up to 256 connecting at once.
                    .maxUnregisteredPerAddress(ServerOptions.DEFAULT_MAX_UNREGISTERED_CONNECTIONS)
                    .build();
            SharedPool pool = new SharedPool();
            WorkerServer.Listener listener = new WorkerServer.Listener() {
                @Override
                public void onRegistered(RemoteWorker worker) {
                    long now = System.nanoTime();
                    firstRegisteredNanos.compareAndSet(0, now);
                    lastRegisteredNanos.set(now);
                    registered.incrementAndGet();
                }

                @Override
                public void onRejected(SocketAddress remote, String reason) {
                    rejected.incrementAndGet();
                }

                @Override
                public void onLost(RemoteWorker worker, Throwable cause) {
                    lost.incrementAndGet();
                }
            };
            try (WorkerServer server = WorkerServer.start(options, pool, listener)) {
                ChildIo.reply("READY", "port", server.address().getPort());
                BufferedReader commands = ChildIo.commands();
                while (true) {
                    Kv cmd = ChildIo.nextCommand(commands);
                    switch (cmd.tag()) {
                        case "stats" -> {
                            long heap = heapAfterGc();
                            ChildIo.reply("STATS", "heapBytes", heap,
                                    "threads", ManagementFactory.getThreadMXBean().getThreadCount(),
                                    "pool", pool.size(), "registered", registered.get(), "lost", lost.get(),
                                    "rejected", rejected.get(), "firstRegisteredNanos", firstRegisteredNanos.get(),
                                    "lastRegisteredNanos", lastRegisteredNanos.get());
                        }
                        case "wait-pool" -> {
                            int n = cmd.intValue("n");
                            long deadline = System.nanoTime() + cmd.longValue("timeoutMs") * 1_000_000;
                            while (pool.size() < n && System.nanoTime() - deadline < 0) {
                                Thread.sleep(1);
                            }
                            ChildIo.reply("POOL", "size", pool.size(), "firstRegisteredNanos",
                                    firstRegisteredNanos.get(), "lastRegisteredNanos", lastRegisteredNanos.get());
                        }
                        case "cpu" -> {
                            long windowMs = cmd.longValue("windowMs");
                            Map<String, Long> threads0 = Machine.threadCpuNanos();
                            long cpu0 = Machine.ownCpuNanos();
                            long t0 = System.nanoTime();
                            Thread.sleep(windowMs);
                            long t1 = System.nanoTime();
                            long cpu1 = Machine.ownCpuNanos();
                            Map<String, Long> threads1 = Machine.threadCpuNanos();
                            ChildIo.reply("CPU", "cpuNanos", cpu1 - cpu0, "wallNanos", t1 - t0,
                                    "threads", Machine.busiestThreads(threads0, threads1, t1 - t0, 5),
                                    "pool", pool.size(), "lost", lost.get());
                        }
                        default -> throw new IllegalArgumentException("unknown command " + cmd.tag());
                    }
                }
            }
        } catch (Exception | Error e) {
            ChildIo.die("scale coordinator", e);
        }
    }

    /**
     * Heap in use after full collections: two {@link System#gc()} calls (the second collects what
     * the first's finalization freed), then the used heap.
     */
    static long heapAfterGc() throws InterruptedException {
        System.gc();
        Thread.sleep(100);
        System.gc();
        Thread.sleep(100);
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}

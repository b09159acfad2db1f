package dev.panoptes.bench.model;

import dev.panoptes.bench.harness.ChildIo;
import dev.panoptes.bench.harness.Kv;

import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One HTTP client of the model-client measurement ({@link ModelClientKinds}) in its own JVM, so
 * that the parent can read this JVM's CPU from /proc around a batch of calls and nothing else
 * runs in it.
 *
 * <p>Arguments: {@code kind baseUrl maxConnections}. Replies {@code READY}. Command
 * {@code run url=<base URL> n=<in flight> calls=<count>} makes that many calls, keeping {@code n}
 * in flight, and replies {@code DONE calls=.. failed=.. ms=.. started=.. peak=.. live=..
 * error=..}: the threads this JVM started during the batch, its peak and final live threads.
 * Blocking kinds (java.net.http as used before) run on {@code n} caller threads made before the
 * first batch of each {@code n} (the worker's job threads, which exist before any call; those of
 * another {@code n} are stopped first); the
 * others chain each new call from the completion of one before it, on the client's own threads,
 * as the asynchronous worker does.
 */
public final class ModelClientNode {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private ModelClientNode() {
    }

    /** Runs the client as described in the class documentation until stdin closes. */
    public static void main(String[] args) {
        ChildIo.startWatchdog();
        ChildIo.logLevel("WARN");
        try (ModelClientKinds client = ModelClientKinds.named(args[0], URI.create(args[1]), Integer.parseInt(args[2]))) {
            Map<Integer, ExecutorService> callers = new HashMap<>();
            ChildIo.reply("READY", "client", args[0]);
            BufferedReader commands = ChildIo.commands();
            while (true) {
                Kv cmd = ChildIo.nextCommand(commands);
                if (!cmd.tag().equals("run")) {
                    continue;
                }
                URI endpoint = URI.create(cmd.get("url") + "/chat/completions");
                int n = cmd.intValue("n");
                int calls = cmd.intValue("calls");
                ExecutorService pool = null;
                if (client.blocking()) {
                    // Only the N of this batch: a worker of capacity N has N job threads, not more.
                    callers.entrySet().removeIf(e -> {
                        if (e.getKey() != n) {
                            e.getValue().shutdownNow();
                            return true;
                        }
                        return false;
                    });
                    pool = callers.computeIfAbsent(n, ModelClientNode::callerThreads);
                }
                long started0 = THREADS.getTotalStartedThreadCount();
                THREADS.resetPeakThreadCount();
                long t0 = System.nanoTime();
                Batch batch = client.blocking() ? blocking(client, endpoint, n, calls, pool)
                        : chained(client, endpoint, n, calls);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                ChildIo.reply("DONE", "calls", calls, "failed", batch.failed.get(), "ms", ms,
                        "started", THREADS.getTotalStartedThreadCount() - started0,
                        "peak", THREADS.getPeakThreadCount(), "live", THREADS.getThreadCount(),
                        "error", batch.firstError.get() == null ? "-" : batch.firstError.get().replace(' ', '_'));
            }
        } catch (Exception | Error e) {
            ChildIo.die("model client " + args[0], e);
        }
    }

    private static ExecutorService callerThreads(int n) {
        AtomicInteger count = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "caller-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        // Start them all now, as a worker's job threads exist before its calls.
        CountDownLatch up = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            pool.execute(up::countDown);
        }
        try {
            up.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return pool;
    }

    /** One batch's tally. */
    private static final class Batch {
        final AtomicLong issued = new AtomicLong();
        final AtomicLong done = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> firstError = new AtomicReference<>();
        final CountDownLatch finished = new CountDownLatch(1);
        final long calls;

        Batch(long calls) {
            this.calls = calls;
        }

        void fail(Throwable t) {
            failed.incrementAndGet();
            firstError.compareAndSet(null, String.valueOf(ModelClientKinds.cause(t)));
        }

        void await() throws InterruptedException {
            if (!finished.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("batch of " + calls + " calls not done in 10 minutes: " + done.get()
                        + " done");
            }
        }
    }

    private static Batch blocking(ModelClientKinds client, URI endpoint, int n, int calls, ExecutorService pool)
            throws InterruptedException {
        Batch b = new Batch(calls);
        CountDownLatch threads = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                try {
                    while (b.issued.incrementAndGet() <= calls) {
                        try {
                            client.callBlocking(endpoint);
                        } catch (Exception e) {
                            b.fail(e);
                        }
                        b.done.incrementAndGet();
                    }
                } finally {
                    threads.countDown();
                }
            });
        }
        threads.await();
        b.finished.countDown();
        return b;
    }

    private static Batch chained(ModelClientKinds client, URI endpoint, int n, int calls) throws InterruptedException {
        Batch b = new Batch(calls);
        for (int i = 0; i < n; i++) {
            next(client, endpoint, b);
        }
        b.await();
        return b;
    }

    /** Starts a call unless all are issued; its completion starts the next. */
    private static void next(ModelClientKinds client, URI endpoint, Batch b) {
        if (b.issued.incrementAndGet() > b.calls) {
            return;
        }
        CompletableFuture<Integer> call;
        try {
            call = client.call(endpoint);
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        call.whenComplete((length, t) -> {
            if (t != null) {
                b.fail(t);
            }
            if (b.done.incrementAndGet() == b.calls) {
                b.finished.countDown();
            } else {
                next(client, endpoint, b);
            }
        });
    }
}

package dev.panoptes.worker;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.ResultStore;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Shows a run's progress: done/total, workers connected, redeliveries, rate and ETA. On a
 * terminal it rewrites one line in place a few times a second; otherwise (a pipe, a CI log) it
 * prints a plain line every few seconds.
 *
 * <p>The scheduler's callbacks only bump counters; a timer thread does the printing, so a slow
 * terminal never slows the run.
 */
final class ProgressPrinter implements ProgressListener, AutoCloseable {
    private final PrintWriter out;
    private final boolean terminal;
    private final WorkerSet workers;
    private final ScheduledExecutorService timer;
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicInteger skipped = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicLong redeliveries = new AtomicLong();
    private final long startNanos = System.nanoTime();
    private volatile int lastLength;

    ProgressPrinter(PrintWriter out, boolean terminal, WorkerSet workers) {
        this.out = out;
        this.terminal = terminal;
        this.workers = workers;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "progress");
            t.setDaemon(true);
            return t;
        });
        long periodMs = terminal ? 250 : 5000;
        timer.scheduleAtFixedRate(this::print, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void onStart(int toRun, int skipped) {
        this.skipped.set(skipped);
        // Jobs complete from an earlier run count as done, so a resumed run shows the whole suite.
        total.set(toRun + skipped);
        done.set(skipped);
    }

    @Override
    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
        done.incrementAndGet();
    }

    @Override
    public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
        redeliveries.incrementAndGet();
    }

    @Override
    public void onFailed(Job job, String reason, int attempts) {
        done.incrementAndGet();
        failed.incrementAndGet();
    }

    /** One progress line, as printed. */
    String line() {
        int d = done.get();
        int t = total.get();
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        double rate = seconds > 0 ? (d - skipped.get()) / seconds : 0;
        String eta = rate > 0 && d < t ? String.format(Locale.ROOT, "%.0f s", (t - d) / rate) : "-";
        return String.format(Locale.ROOT, "progress: %d/%d jobs (%.0f%%), %d failed, %d workers, %d redelivered, "
                        + "%.1f jobs/s, ETA %s", d, t, t == 0 ? 100.0 : 100.0 * d / t, failed.get(), workers.size(),
                redeliveries.get(), rate, eta);
    }

    private synchronized void print() {
        String line = line();
        if (terminal) {
            int pad = Math.max(0, lastLength - line.length());
            out.print("\r" + line + " ".repeat(pad));
            lastLength = line.length();
        } else {
            out.println(line);
        }
        out.flush();
    }

    /** Prints a message on its own line without garbling the progress line. */
    synchronized void message(String text) {
        if (terminal && lastLength > 0) {
            out.print("\r" + " ".repeat(lastLength) + "\r");
            lastLength = 0;
        }
        out.println(text);
        out.flush();
    }

    /** Stops updating and prints the final line; idempotent. */
    void finish() {
        if (timer.isShutdown()) {
            return;
        }
        timer.shutdownNow();
        print();
        if (terminal) {
            synchronized (this) {
                out.println();
                out.flush();
                lastLength = 0;
            }
        }
    }

    /** Stops updating without a final line (the run failed or was interrupted); idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
        synchronized (this) {
            if (terminal && lastLength > 0) {
                out.println();
                out.flush();
                lastLength = 0;
            }
        }
    }
}

package dev.panoptes.coordinator;

import dev.panoptes.console.Durations;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Plural;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.ResultStore;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The coordinator's console: a run's progress (done/total, workers connected and quarantined,
 * redeliveries, rate and ETA) and its messages, on standard error. On a terminal it rewrites
 * one progress line in place a few times a second; otherwise (a pipe, a CI log) it prints a
 * plain progress line every few seconds, and each message on its own line as it comes.
 *
 * <p><b>Threads.</b> Only its own thread, {@code console}, writes: the scheduler's callbacks
 * only bump counters, and {@link #message} only queues a line, so a console that stops taking
 * output (a full pipe, Ctrl-S) never stalls the run, the scheduler or any I/O. If it stays
 * stalled, at most {@value #MAX_QUEUED_LINES} lines wait: each line beyond drops the oldest
 * waiting one (the newest say how things stand, and the last ones say how the run ended), and the
 * drops are counted and reported. The final progress line waits apart from them and is never
 * dropped. {@link #finish()} and {@link #close()} give up waiting for a stalled console after a
 * moment; what is queued then still comes out if it starts taking output again.
 */
final class ProgressPrinter implements ProgressListener, AutoCloseable {
    static final int MAX_QUEUED_LINES = 1_000;
    /** How long finish() and close() wait for a stalled console before going on without it. */
    private static final long DRAIN_TIMEOUT_MS = 2_000;

    private final PrintWriter out;
    private final boolean terminal;
    private final WorkerSet workers;
    private final long periodNanos;
    /** Lines waiting for the console thread, oldest first; guarded by itself. */
    private final ArrayDeque<String> lines = new ArrayDeque<>();
    /** The line to print last, once the lines before it are out; guarded by {@link #lines}. */
    private String finalLine;
    /** Set by {@link #stop}: print what waits, then the final line, and end; guarded by {@link #lines}. */
    private boolean stopping;
    private final Thread console;
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicInteger skipped = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    /** Workers quarantined now; counted in the progress line while they are still connected. */
    private final Set<WorkerHandle> quarantined = ConcurrentHashMap.newKeySet();
    private final AtomicLong redeliveries = new AtomicLong();
    /** Lines dropped and not reported yet; guarded by {@link #lines}. */
    private long dropped;
    private final long startNanos = System.nanoTime();
    private volatile boolean ticking = true;
    /** Owned by the console thread: the length of the progress line on screen, for rewriting. */
    private int lastLength;

    ProgressPrinter(PrintWriter out, boolean terminal, WorkerSet workers) {
        this.out = out;
        this.terminal = terminal;
        this.workers = workers;
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(terminal ? 250 : 5000);
        this.console = new Thread(this::printLoop, "console");
        console.setDaemon(true);
        console.start();
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

    @Override
    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
        quarantined.add(worker);
        message("worker " + worker.id() + " quarantined: " + Plural.of(failuresInARow, "failure")
                + (failuresInARow == 1 ? " was" : " in a row were") + " its own, not"
                + " its jobs'; no new jobs for " + Durations.format(duration) + ". Last: " + reason);
    }

    @Override
    public void onProbation(WorkerHandle worker) {
        quarantined.remove(worker);
        message("worker " + worker.id() + " is out of quarantine: one job at a time until one succeeds");
    }

    @Override
    public void onAllWorkersQuarantined(Duration waited, int workerCount) {
        message("every connected worker (" + workerCount + ") has been quarantined for " + waited.toSeconds()
                + " s; waiting for one to recover or for another worker to connect");
    }

    /** One progress line, as printed. */
    String line() {
        int d = done.get();
        int t = total.get();
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        double rate = seconds > 0 ? (d - skipped.get()) / seconds : 0;
        String eta = rate > 0 && d < t ? String.format(Locale.ROOT, "%.0f s", (t - d) / rate) : "-";
        int q = 0;
        for (WorkerHandle w : quarantined) {
            if (workers.contains(w)) {
                q++;
            }
        }
        return String.format(Locale.ROOT, "progress: %d/%d %s (%.0f%%), %d failed, %s%s, %d redelivered, "
                        + "%.1f jobs/s, ETA %s", d, t, Plural.noun(t, "job"), t == 0 ? 100.0 : 100.0 * d / t,
                failed.get(),
                Plural.of(workers.size(), "worker"),
                q > 0 ? " (" + q + " quarantined)" : "", redeliveries.get(), rate, eta);
    }

    /**
     * Prints a message on its own line, without garbling the progress line. Never blocks: the
     * line is queued for the console thread. Any thread.
     */
    void message(String text) {
        synchronized (lines) {
            if (lines.size() >= MAX_QUEUED_LINES) {
                lines.pollFirst();
                dropped++;
            }
            lines.addLast(text);
            lines.notifyAll();
        }
    }

    /**
     * Stops updating, prints the final progress line and waits (briefly) until every queued
     * line is out; idempotent.
     */
    void finish() {
        stop(true);
    }

    /** Stops updating without a final line (the run failed or was interrupted); idempotent. */
    @Override
    public void close() {
        stop(false);
    }

    private void stop(boolean withFinalLine) {
        if (!ticking) {
            return;
        }
        ticking = false;
        synchronized (lines) {
            finalLine = withFinalLine ? line() : null;
            stopping = true;
            lines.notifyAll();
        }
        try {
            console.join(DRAIN_TIMEOUT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void printLoop() {
        long nextTick = System.nanoTime() + periodNanos;
        while (true) {
            String text;
            long lost;
            String last = null;
            boolean end = false;
            synchronized (lines) {
                long wait;
                while (lines.isEmpty() && !stopping && (wait = nextTick - System.nanoTime()) > 0) {
                    try {
                        TimeUnit.NANOSECONDS.timedWait(lines, wait);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                text = lines.pollFirst();
                lost = dropped;
                dropped = 0;
                if (text == null && stopping) {
                    last = finalLine;
                    end = true;
                }
            }
            if (lost > 0) {
                printMessage("(" + lost + " earlier console lines dropped while the console was not taking output)");
            }
            if (end) {
                if (last != null) {
                    printMessage(last);
                }
                endProgressLine();
                return;
            }
            if (text != null) {
                printMessage(text);
            } else if (ticking) {
                printProgress(line());
                nextTick = System.nanoTime() + periodNanos;
            } else {
                nextTick = System.nanoTime() + periodNanos;
            }
        }
    }

    private void printProgress(String line) {
        if (terminal) {
            int pad = Math.max(0, lastLength - line.length());
            out.print("\r" + line + " ".repeat(pad));
            lastLength = line.length();
        } else {
            out.println(line);
        }
        out.flush();
    }

    private void printMessage(String text) {
        if (terminal && lastLength > 0) {
            out.print("\r" + " ".repeat(lastLength) + "\r");
            lastLength = 0;
        }
        out.println(text);
        out.flush();
    }

    private void endProgressLine() {
        if (terminal && lastLength > 0) {
            out.println();
            out.flush();
            lastLength = 0;
        }
    }
}

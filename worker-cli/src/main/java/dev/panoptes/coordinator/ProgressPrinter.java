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
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The coordinator's console: a run's progress (done/total, workers connected and quarantined,
 * redeliveries, rate and ETA) and its messages, on standard error. On a live terminal
 * ({@link LiveTerminal}) it redraws a {@link ProgressBar} in place {@value #REDRAW_PER_SECOND}
 * times a second at most; otherwise (a pipe, a CI log, {@code --no-progress}) it prints a plain
 * progress line every few seconds, and each message on its own line as it comes. Cache hits and
 * cost reach the bar through {@link ProgressCounts}.
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
final class ProgressPrinter implements ProgressListener, ProgressCounts, AutoCloseable {
    static final int MAX_QUEUED_LINES = 1_000;
    /** The bar's redraws at most, whatever the answer rate: counting stays an increment on the callers' threads. */
    static final int REDRAW_PER_SECOND = 5;
    /** How often the plain progress line comes when the console is not a live terminal. */
    private static final long LINE_PERIOD_MS = 5_000;
    /** How long finish() and close() wait for a stalled console before going on without it. */
    private static final long DRAIN_TIMEOUT_MS = 2_000;

    private final PrintWriter out;
    /** Finds the live terminal, on the console thread: asking the terminal takes a moment the run need not wait. */
    private final Supplier<LiveTerminal> opener;
    /** Owned by the console thread: the live terminal the bar is drawn on, or null for plain lines. */
    private LiveTerminal terminal;
    private final WorkerSet workers;
    /** Owned by the console thread: how often the progress is printed. */
    private long periodNanos;
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
    /** Answers in the run, and those an earlier run stored; -1 until {@link #expectAnswers} (the bar counts jobs). */
    private volatile long answersTotal = -1;
    private volatile long answersBefore;
    private final LongAdder answersDone = new LongAdder();
    private final LongAdder answersFailed = new LongAdder();
    private final LongAdder cacheHits = new LongAdder();
    private volatile boolean cacheFed;
    private final DoubleAdder cost = new DoubleAdder();
    private volatile boolean costFed;
    /** Lines dropped and not reported yet; guarded by {@link #lines}. */
    private long dropped;
    private final long startNanos = System.nanoTime();
    private volatile boolean ticking = true;
    /** Owned by the console thread: the bar's rate, from the counts it drew. */
    private final RecentRate recentRate = new RecentRate();
    /** Owned by the console thread: the length of the progress line on screen, for rewriting. */
    private int lastLength;

    /**
     * @param out      the process's standard error when {@code terminal} is true: that is the
     *                 stream whose terminal is asked about
     * @param terminal whether to draw the bar when standard error is a live terminal (false:
     *                 plain lines whatever it is)
     */
    ProgressPrinter(PrintWriter out, boolean terminal, WorkerSet workers) {
        this(out, terminal ? () -> LiveTerminal.openStandardError(System.getenv()) : () -> null, workers);
    }

    /** @param terminal gives the live terminal {@code out} writes to, or null for plain lines; on the console thread */
    ProgressPrinter(PrintWriter out, Supplier<LiveTerminal> terminal, WorkerSet workers) {
        this.out = out;
        this.opener = terminal;
        this.workers = workers;
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
        answersDone.add(job.size());
    }

    @Override
    public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
        redeliveries.incrementAndGet();
    }

    @Override
    public void onFailed(Job job, String reason, int attempts) {
        done.incrementAndGet();
        failed.incrementAndGet();
        answersDone.add(job.size());
        answersFailed.add(job.size());
    }

    /**
     * Counts the bar in answers from here on: {@code total} in the run, {@code storedBefore} of
     * them already stored by an earlier run. Any thread, before the run starts.
     */
    void expectAnswers(long total, long storedBefore) {
        answersBefore = Math.min(total, storedBefore);
        answersTotal = total;
    }

    @Override
    public void addCacheHits(int answers) {
        cacheHits.add(answers);
        if (!cacheFed) {
            cacheFed = true;
        }
    }

    @Override
    public void addCost(double dollars) {
        cost.add(dollars);
        if (!costFed) {
            costFed = true;
        }
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

    /** The counts for the bar now, with the rate since the start: in answers once they are expected, else in jobs. */
    ProgressBar.Snapshot snapshot() {
        return snapshot(null);
    }

    /** @param recent the rate lately, updated with this count; null for the rate since the start */
    private ProgressBar.Snapshot snapshot(RecentRate recent) {
        long now = System.nanoTime();
        boolean inAnswers = answersTotal >= 0;
        long all = inAnswers ? answersTotal : total.get();
        long before = inAnswers ? answersBefore : skipped.get();
        long d = Math.min(all, inAnswers ? before + answersDone.sum() : done.get());
        double seconds = (now - startNanos) / 1e9;
        double rate = recent != null ? recent.update(now, d) : seconds > 0 ? Math.max(0, d - before) / seconds : 0;
        return new ProgressBar.Snapshot(d, all, inAnswers ? "answer" : "job",
                inAnswers ? answersFailed.sum() : failed.get(), cacheFed ? cacheHits.sum() : -1,
                costFed ? cost.sum() : Double.NaN, rate, workers.size(), quarantinedConnected());
    }

    private int quarantinedConnected() {
        int q = 0;
        for (WorkerHandle w : quarantined) {
            if (workers.contains(w)) {
                q++;
            }
        }
        return q;
    }

    /** One progress line, as printed. */
    String line() {
        int d = done.get();
        int t = total.get();
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        double rate = seconds > 0 ? (d - skipped.get()) / seconds : 0;
        String eta = rate > 0 && d < t ? String.format(Locale.ROOT, "%.0f s", (t - d) / rate) : "-";
        int q = quarantinedConnected();
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
        terminal = opener.get();
        periodNanos = terminal != null ? TimeUnit.SECONDS.toNanos(1) / REDRAW_PER_SECOND
                : TimeUnit.MILLISECONDS.toNanos(LINE_PERIOD_MS);
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
                printProgress();
                nextTick = System.nanoTime() + periodNanos;
            } else {
                nextTick = System.nanoTime() + periodNanos;
            }
        }
    }

    private void printProgress() {
        if (terminal != null) {
            String bar = ProgressBar.render(snapshot(recentRate), terminal.columns());
            out.print(terminal.rewrite(bar, lastLength));
            lastLength = bar.length();
        } else {
            out.println(line());
        }
        out.flush();
    }

    private void printMessage(String text) {
        if (terminal != null && lastLength > 0) {
            out.print(terminal.blank(lastLength));
            lastLength = 0;
        }
        out.println(text);
        out.flush();
    }

    private void endProgressLine() {
        if (terminal != null) {
            if (lastLength > 0) {
                out.println();
                out.flush();
                lastLength = 0;
            }
            terminal.close();
        }
    }
}

package dev.panoptes.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.Redaction;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.WorkerServer;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * What a coordinator run is doing, told by the scheduler ({@link ProgressListener}) and by the
 * worker server ({@link WorkerServer.Listener}), for the status view and the metrics: the run's
 * counts, and one row per connected worker. It interprets each event once and passes the
 * meaning to {@link CoordinatorMetrics}, when there is one.
 *
 * <p><b>Threads.</b> Scheduler events arrive on the scheduler's thread, server events on the
 * server's events thread; {@link #view()} and the gauges read from any thread (the admin
 * endpoint's). Counts are atomics, rows live in a concurrent map and their fields are atomics or
 * volatile; the set of jobs in flight is written by the scheduler's thread only.
 */
public final class RunStatus implements ProgressListener, WorkerServer.Listener {
    /** How long a status request waits for one worker's selector thread to say how long it was silent. */
    private static final Duration SILENCE_WAIT = Duration.ofMillis(250);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String runId;
    private final String suite;
    private final List<String> models;
    private final String scorer;
    private final int epochs;
    private final LongSupplier nanoClock;
    private final Clock wallClock;
    private final long startNanos;
    private final RunRecorder metrics;

    private final AtomicLong jobsTotal = new AtomicLong();
    private final AtomicLong jobsSkipped = new AtomicLong();
    private final AtomicLong jobsCompleted = new AtomicLong();
    private final AtomicLong jobsFailed = new AtomicLong();
    private final AtomicLong answersStored = new AtomicLong();
    private final AtomicLong phases = new AtomicLong();
    private volatile long firstDispatchNanos = -1;
    private volatile boolean finished;
    /** Jobs dispatched and not answered: written on the scheduler's thread only; bounded by the fleet's slots. */
    private final Map<JobId, WorkerHandle> inFlight = new ConcurrentHashMap<>();
    /** The connected workers, by identity (two connections may share an id). */
    private final Map<RemoteWorker, Row> rows = new ConcurrentHashMap<>();
    private final AtomicLong registrations = new AtomicLong();

    /**
     * @param metrics where the meaning of each event goes; {@link RunRecorder#NONE} for nowhere
     */
    public RunStatus(String runId, String suite, List<String> models, String scorer, int epochs,
                     RunRecorder metrics) {
        this(runId, suite, models, scorer, epochs, metrics, System::nanoTime, Clock.systemUTC());
    }

    RunStatus(String runId, String suite, List<String> models, String scorer, int epochs,
              RunRecorder metrics, LongSupplier nanoClock, Clock wallClock) {
        this.runId = runId;
        this.suite = suite;
        this.models = List.copyOf(models);
        this.scorer = scorer;
        this.epochs = epochs;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
        this.wallClock = wallClock;
        this.startNanos = nanoClock.getAsLong();
    }

    /** The run is over (its summary printed): the view says {@code finished}. */
    public void markFinished() {
        finished = true;
    }

    // ------------------------------------------------------------------ scheduler's thread

    @Override
    public void onStart(int toRun, int skipped) {
        phases.incrementAndGet();
        jobsTotal.addAndGet((long) toRun + skipped);
        jobsSkipped.addAndGet(skipped);
    }

    @Override
    public void onDispatched(Job job, WorkerHandle worker, int attempt) {
        if (firstDispatchNanos < 0) {
            firstDispatchNanos = nanoClock.getAsLong();
        }
        inFlight.put(job.id(), worker);
    }

    @Override
    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
        inFlight.remove(job.id());
        jobsCompleted.incrementAndGet();
        answersStored.addAndGet(receipt.stored());
        Row row = row(worker);
        if (row != null) {
            row.completed.incrementAndGet();
            // Probation ends with the first success; a quarantine with its release.
            row.quarantine = Quarantine.NONE;
            row.quarantinedUntil = null;
        }
        metrics.completed(job, outcome, receipt);
    }

    @Override
    public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
        inFlight.remove(job.id());
        Row row = row(worker);
        if (row != null) {
            row.failures.incrementAndGet();
        }
        metrics.redelivered(scopeOf(cause));
    }

    @Override
    public void onFailed(Job job, String reason, int attempts) {
        WorkerHandle lastWorker = inFlight.remove(job.id());
        boolean wasInFlight = lastWorker != null;
        jobsFailed.incrementAndGet();
        Row row = wasInFlight ? row(lastWorker) : null;
        if (row != null) {
            row.failures.incrementAndGet();
        }
        // The scheduler fails a job for good in three ways: its own fault on an answer, a last
        // attempt spent (its reason then starts "gave up after"), or no usable worker for too
        // long (the job was not in flight).
        String scope;
        if (!wasInFlight) {
            scope = "no_worker";
        } else if (reason != null && reason.startsWith("gave up after ")) {
            scope = "attempts_exhausted";
        } else {
            scope = "job";
        }
        metrics.failed(scope);
    }

    @Override
    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
        Row row = row(worker);
        if (row != null) {
            row.quarantine = Quarantine.QUARANTINED;
            row.quarantinedUntil = wallClock.instant().plus(duration);
        }
        metrics.quarantined();
    }

    @Override
    public void onProbation(WorkerHandle worker) {
        Row row = row(worker);
        if (row != null) {
            row.quarantine = Quarantine.PROBATION;
            row.quarantinedUntil = null;
        }
    }

    // ------------------------------------------------------------------ server's events thread

    @Override
    public void onRegistered(RemoteWorker worker) {
        row(worker);
        metrics.registered();
    }

    @Override
    public void onRejected(SocketAddress remote, String reason) {
        metrics.rejected();
    }

    @Override
    public void onLost(RemoteWorker worker, Throwable cause) {
        rows.remove(worker);
        metrics.lost(lossReason(cause));
    }

    // ------------------------------------------------------------------ any thread

    /** Jobs dispatched and not answered yet. */
    public int jobsInFlight() {
        return inFlight.size();
    }

    /** Jobs neither done, failed nor in flight: waiting for a worker (or for a retry's backoff). */
    public long jobsWaiting() {
        return Math.max(0, jobsTotal.get() - jobsSkipped.get() - jobsCompleted.get() - jobsFailed.get()
                - inFlight.size());
    }

    /** The workers connected now, draining ones included. */
    public List<RemoteWorker> workers() {
        List<RemoteWorker> open = new ArrayList<>();
        for (RemoteWorker w : rows.keySet()) {
            if (w.isOpen()) {
                open.add(w);
            }
        }
        return open;
    }

    /** Workers in quarantine now (not those on probation). */
    public int quarantinedCount() {
        int n = 0;
        Instant now = wallClock.instant();
        for (Row row : rows.values()) {
            Instant until = row.quarantinedUntil;
            if (row.quarantine == Quarantine.QUARANTINED && row.worker.isOpen() && until != null && until.isAfter(now)) {
                n++;
            }
        }
        return n;
    }

    /**
     * The longest any connected worker has been silent, in seconds: each is asked of its
     * selector thread, waiting a little. 0 when no worker is connected.
     */
    public double oldestSilenceSeconds() throws InterruptedException {
        long oldest = 0;
        for (RemoteWorker w : workers()) {
            oldest = Math.max(oldest, w.silentMs(SILENCE_WAIT));
        }
        return oldest / 1000.0;
    }

    /** The run and its workers now. */
    public StatusView view() throws InterruptedException {
        long now = nanoClock.getAsLong();
        double elapsed = (now - startNanos) / 1e9;
        long done = jobsSkipped.get() + jobsCompleted.get();
        long failed = jobsFailed.get();
        long remaining = Math.max(0, jobsTotal.get() - done - failed);
        Double eta = null;
        long first = firstDispatchNanos;
        long answered = jobsCompleted.get() + failed;
        if (finished || (phases.get() > 0 && remaining == 0)) {
            eta = 0.0;
        } else if (first >= 0 && answered > 0 && now > first) {
            eta = remaining * ((now - first) / 1e9) / answered;
        }
        StatusView.Run run = new StatusView.Run(runId, suite, models, scorer, epochs,
                finished ? "finished" : "running", phases.get() > 1 ? "grading" : "answering", jobsTotal.get(),
                done, failed, inFlight.size(), answersStored.get(), round(elapsed), eta == null ? null : round(eta));
        List<Row> ordered = new ArrayList<>(rows.values());
        ordered.sort((a, b) -> Long.compare(a.order, b.order));
        List<StatusView.Worker> workers = new ArrayList<>();
        for (Row row : ordered) {
            RemoteWorker w = row.worker;
            if (!w.isOpen()) {
                continue;
            }
            long silentMs = w.silentMs(SILENCE_WAIT);
            Instant until = row.quarantinedUntil;
            String quarantine = row.quarantine.label;
            if (row.quarantine == Quarantine.QUARANTINED && until != null && !until.isAfter(wallClock.instant())) {
                // Released by time; the scheduler says "probation" at its next pass.
                quarantine = Quarantine.PROBATION.label;
                until = null;
            }
            workers.add(new StatusView.Worker(w.id(), String.valueOf(w.remoteAddress()), w.capacity(),
                    w.pendingCount(), w.queuedCount(), row.completed.get(), row.failures.get(), quarantine,
                    until == null ? null : until.toString(), silentMs < 0 ? null : round(silentMs / 1000.0),
                    new ArrayList<>(w.models()), w.isDraining(), Redaction.url(w.endpoint())));
        }
        return new StatusView(run, workers);
    }

    /** {@link #view()} as JSON. */
    public String json() {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(view());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking the workers' threads for the status view", e);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The row of a connected remote worker, made on first sight; null for any other handle. */
    private Row row(WorkerHandle handle) {
        if (!(handle instanceof RemoteWorker worker) || !worker.isOpen()) {
            return null;
        }
        return rows.computeIfAbsent(worker, w -> new Row(w, registrations.incrementAndGet()));
    }

    /** The label of a redelivery: whose failure it was. */
    static String scopeOf(Throwable cause) {
        if (cause instanceof DispatchRefusedException) {
            return "refused";
        }
        if (cause instanceof ControlException ce) {
            return ce.scope().name().toLowerCase(Locale.ROOT);
        }
        return "transient";
    }

    /** The label of a lost connection, from its first cause (see {@link WorkerServer.Listener#onLost}). */
    static String lossReason(Throwable cause) {
        if (cause == null || cause instanceof EOFException) {
            return "closed";
        }
        if (cause instanceof TimeoutException) {
            return "silent";
        }
        if (cause instanceof ProtocolException) {
            return "protocol";
        }
        if (cause instanceof WorkerException) {
            return "server_closed";
        }
        if (cause instanceof IOException) {
            return "io";
        }
        return "other";
    }

    private static double round(double seconds) {
        return Math.round(seconds * 1000) / 1000.0;
    }

    enum Quarantine {
        NONE("none"), QUARANTINED("quarantined"), PROBATION("probation");

        final String label;

        Quarantine(String label) {
            this.label = label;
        }
    }

    private static final class Row {
        final RemoteWorker worker;
        final long order;
        final AtomicLong completed = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        volatile Quarantine quarantine = Quarantine.NONE;
        volatile Instant quarantinedUntil;

        Row(RemoteWorker worker, long order) {
            this.worker = worker;
            this.order = order;
        }
    }
}

package dev.panoptes.admin;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.remote.RemoteWorker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The coordinator's meters (docs/OPERATIONS.md, "Metrics"): counters fed by the meaning
 * {@link RunStatus} gives each event, and gauges that read {@link RunStatus} and the connected
 * workers at scrape time. No label carries a job id; the only labels are bounded sets (model,
 * scope, reason, operation, kind). Per-worker figures are in the status view, not here.
 *
 * <p>Thread-safe: counters are called on the scheduler's and the server's events threads,
 * gauges read on the admin endpoint's.
 */
public final class CoordinatorMetrics implements RunRecorder {
    private static final Logger log = LoggerFactory.getLogger(CoordinatorMetrics.class);
    private static final String P = "panoptes.coordinator.";

    private final MeterRegistry registry;
    private final ModelCallMeters modelCalls;
    private final Counter completed;
    private final Counter answersStored;
    private final Counter answersDuplicate;
    private final Counter quarantines;
    private final Counter registrations;
    private final Counter rejections;

    /**
     * Registers every meter, the labelled counters with each of their known values, so that
     * they are there (at 0) from the first scrape.
     */
    public CoordinatorMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.modelCalls = new ModelCallMeters(registry);
        completed = Counter.builder(P + "jobs.completed").description("Jobs answered and stored").register(registry);
        answersStored = Counter.builder(P + "answers.stored")
                .description("Records (one answer to one vignette) newly stored").register(registry);
        answersDuplicate = Counter.builder(P + "answers.duplicate")
                .description("Records received again for a vignette already stored, and ignored").register(registry);
        quarantines = Counter.builder(P + "quarantines")
                .description("Times a worker was quarantined for failing on its own account").register(registry);
        registrations = Counter.builder(P + "workers.registered").description("Worker registrations accepted")
                .register(registry);
        rejections = Counter.builder(P + "registrations.rejected")
                .description("Connections refused before they became workers (token, protocol, id, timeout)")
                .register(registry);
        for (String scope : List.of("refused", "worker", "transient")) {
            redeliveredCounter(scope);
        }
        for (String scope : List.of("job", "attempts_exhausted", "no_worker")) {
            failedCounter(scope);
        }
        for (String reason : List.of("closed", "silent", "protocol", "io", "server_closed", "other")) {
            lostCounter(reason);
        }
    }

    /** Adds the gauges that read the run's state. Call once, with the run's status. */
    public CoordinatorMetrics watch(RunStatus status) {
        Gauge.builder(P + "workers.connected", status, s -> s.workers().size())
                .description("Workers connected now, draining ones included").register(registry);
        Gauge.builder(P + "workers.quarantined", status, RunStatus::quarantinedCount)
                .description("Workers in quarantine now (getting no new jobs)").register(registry);
        Gauge.builder(P + "jobs.in.flight", status, RunStatus::jobsInFlight)
                .description("Jobs dispatched to a worker and not answered yet").register(registry);
        Gauge.builder(P + "jobs.queued", status, RunStatus::jobsWaiting)
                .description("Jobs of the run waiting to be sent (never sent yet, or waiting to be sent again)")
                .register(registry);
        Gauge.builder(P + "worker.dispatch.queue", status, CoordinatorMetrics::dispatchQueue)
                .description("Dispatches waiting in the workers' connection queues for a free slot").register(registry);
        Gauge.builder(P + "heartbeat.age.max", status, CoordinatorMetrics::oldestSilence)
                .description("The longest any connected worker has been silent (no heartbeat, no answer)")
                .baseUnit("seconds").register(registry);
        return this;
    }

    @Override
    public void completed(Job job, JobOutcome outcome, ResultStore.Receipt receipt) {
        completed.increment();
        answersStored.increment(receipt.stored());
        answersDuplicate.increment(receipt.duplicates());
        modelCalls.record(job, outcome);
    }

    @Override
    public void redelivered(String scope) {
        redeliveredCounter(scope).increment();
    }

    @Override
    public void failed(String scope) {
        failedCounter(scope).increment();
    }

    @Override
    public void quarantined() {
        quarantines.increment();
    }

    @Override
    public void registered() {
        registrations.increment();
    }

    @Override
    public void rejected() {
        rejections.increment();
    }

    @Override
    public void lost(String reason) {
        lostCounter(reason).increment();
    }

    private Counter redeliveredCounter(String scope) {
        return Counter.builder(P + "jobs.redelivered").description("Job attempts that failed and were sent again,"
                + " by whose failure it was").tag("scope", scope).register(registry);
    }

    private Counter failedCounter(String scope) {
        return Counter.builder(P + "jobs.failed").description("Jobs that failed for good, by why")
                .tag("scope", scope).register(registry);
    }

    private Counter lostCounter(String reason) {
        return Counter.builder(P + "workers.lost").description("Worker connections that ended, by why")
                .tag("reason", reason).register(registry);
    }

    private static double dispatchQueue(RunStatus status) {
        int queued = 0;
        for (RemoteWorker w : status.workers()) {
            queued += w.queuedCount();
        }
        return queued;
    }

    private static double oldestSilence(RunStatus status) {
        try {
            return status.oldestSilenceSeconds();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.debug("interrupted while asking the workers' threads how long they were silent");
            return Double.NaN;
        }
    }
}

package dev.panoptes.admin;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.store.ForwardingResultStore;
import dev.panoptes.control.store.ResultStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * A {@link ResultStore} that times its writes: {@code panoptes_store_write_seconds} (histogram;
 * operation=record|record_failure), failed writes included. Reads pass through untimed. Every
 * call goes to the store it wraps, default methods included, so that the store's own overrides
 * (one pass over a suite, the job's context kept with each record) still apply. Closing it
 * closes nothing: the run owns the store.
 */
public final class TimedResultStore extends ForwardingResultStore {
    private static final Duration[] WRITE_BUCKETS = {
        Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
        Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
        Duration.ofSeconds(1), Duration.ofSeconds(5)
    };

    private final Timer record;
    private final Timer recordFailure;

    public TimedResultStore(ResultStore store, MeterRegistry registry) {
        super(store);
        this.record = timer(registry, "record");
        this.recordFailure = timer(registry, "record_failure");
    }

    private static Timer timer(MeterRegistry registry, String operation) {
        return Timer.builder("panoptes.store.write")
                .description("Time to write one outcome (its share of a batch written in one transaction) or one"
                        + " failure to the result store")
                .tag("operation", operation)
                .serviceLevelObjectives(WRITE_BUCKETS)
                .register(registry);
    }

    @Override
    public Receipt record(JobOutcome outcome, String workerId) {
        return timed(record, () -> delegate().record(outcome, workerId));
    }

    @Override
    public Receipt record(Job job, JobOutcome outcome, String workerId) {
        return timed(record, () -> delegate().record(job, outcome, workerId));
    }

    /**
     * A batch of answers, committed at once, counts one write per outcome, each its share of the
     * batch's time: the count stays outcomes written and the sum the time spent writing them.
     */
    @Override
    public void recordAll(List<Answer> answers, List<Written> done) {
        long start = System.nanoTime();
        try {
            forwardRecordAll(answers, done);
        } finally {
            int n = Math.max(1, answers.size());
            long share = (System.nanoTime() - start) / n;
            for (int i = 0; i < n; i++) {
                record.record(share, java.util.concurrent.TimeUnit.NANOSECONDS);
            }
        }
    }

    @Override
    public void recordFailure(Job job, String reason, int attempts) {
        timed(recordFailure, () -> {
            delegate().recordFailure(job, reason, attempts);
            return null;
        });
    }

    @Override
    public void recordFailure(JobId jobId, String reason, int attempts) {
        timed(recordFailure, () -> {
            delegate().recordFailure(jobId, reason, attempts);
            return null;
        });
    }

    /** Closes nothing: the store it wraps belongs to the run. */
    @Override
    public void close() {
    }

    private static <T> T timed(Timer timer, Supplier<T> write) {
        long start = System.nanoTime();
        try {
            return write.get();
        } finally {
            timer.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
    }
}

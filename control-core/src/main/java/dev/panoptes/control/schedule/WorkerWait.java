package dev.panoptes.control.schedule;

import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How long a run has had work and no usable worker (none connected, or every one quarantined),
 * what to tell the listener about it every few seconds, and when to give up
 * ({@link SchedulerOptions#waitForWorkers()}).
 *
 * <p>Not thread-safe: owned by the thread running the scheduler's {@code run}.
 */
final class WorkerWait {
    private static final Logger log = LoggerFactory.getLogger(WorkerWait.class);
    private static final long REPORT_EVERY_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Duration limit;
    private final ProgressListener listener;
    /** Since when no worker has been usable, or -1 while one is. */
    private long sinceNanos = -1;
    private long lastReportNanos;

    WorkerWait(SchedulerOptions options) {
        this.limit = options.waitForWorkers();
        this.listener = options.listener();
    }

    /** There is a usable worker, or nothing to wait for: the clock stops. */
    void notWaiting() {
        sinceNanos = -1;
    }

    /**
     * The run has work and no usable worker: starts the clock (or keeps it running) and reports.
     *
     * @param workers    the workers connected now, every one quarantined (or none)
     * @param outstanding jobs not done yet, for the messages
     * @return null to go on waiting, or the reason to fail what remains with, once the limit passed
     */
    String waiting(long nowNanos, List<WorkerHandle> workers, Quarantine quarantine, int outstanding) {
        boolean allQuarantined = !workers.isEmpty();
        if (sinceNanos < 0) {
            sinceNanos = nowNanos;
            lastReportNanos = nowNanos;
            if (allQuarantined) {
                log.info("{} jobs are waiting and every connected worker ({}) is quarantined; waiting up to {} s",
                        outstanding, workers.size(), limit.toSeconds());
            } else {
                log.info("{} jobs are waiting and no worker is connected; waiting up to {} s", outstanding,
                        limit.toSeconds());
            }
        }
        long waited = nowNanos - sinceNanos;
        if (nowNanos - lastReportNanos >= REPORT_EVERY_NANOS) {
            lastReportNanos = nowNanos;
            log.info("still no usable worker after {} s ({} connected, all quarantined); {} jobs waiting",
                    TimeUnit.NANOSECONDS.toSeconds(waited), workers.size(), outstanding);
            if (allQuarantined) {
                listener.onAllWorkersQuarantined(Duration.ofNanos(waited), workers.size());
            } else {
                listener.onWaitingForWorkers(Duration.ofNanos(waited));
            }
        }
        if (waited < limit.toNanos()) {
            return null;
        }
        String limits = Duration.ofNanos(waited).toMillis() + " ms (limit " + limit.toMillis() + " ms)";
        return allQuarantined
                ? "every connected worker was quarantined for " + limits + " (last failure of " + workers.get(0).id()
                        + ": " + quarantine.lastReason(workers.get(0)) + "); fix the workers' model API settings or"
                        + " start other workers"
                : "no worker connected for " + limits + "; start workers pointed at the coordinator";
    }

    /** When the run must look again: when waiting would reach the limit, else {@code Long.MAX_VALUE}. */
    long nanosToLimit(long nowNanos) {
        return sinceNanos < 0 ? Long.MAX_VALUE : Math.max(0, sinceNanos + limit.toNanos() - nowNanos);
    }
}

package dev.panoptes.control.schedule;

import dev.panoptes.control.HumanDuration;
import dev.panoptes.control.Plural;
import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.ArrayList;
import java.util.Set;
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
     * @param workers     the workers connected now
     * @param serving     those of them that serve a model the waiting jobs ask for, every one
     *                    quarantined (or none)
     * @param outstanding jobs not done yet, for the messages
     * @param wanted      the models the waiting jobs ask for (null for "any")
     * @return null to go on waiting, or the reason to fail what remains with, once the limit passed
     */
    String waiting(long nowNanos, List<WorkerHandle> workers, List<WorkerHandle> serving, Quarantine quarantine,
                   int outstanding, Set<String> wanted) {
        boolean allQuarantined = !serving.isEmpty();
        boolean noneServes = serving.isEmpty() && !workers.isEmpty();
        String models = describeModels(wanted);
        if (sinceNanos < 0) {
            sinceNanos = nowNanos;
            lastReportNanos = nowNanos;
            if (allQuarantined) {
                log.info("{} waiting and every connected worker that serves {} ({}) is quarantined;"
                        + " waiting up to {}", jobsWaiting(outstanding), models, serving.size(), HumanDuration.of(limit));
            } else if (noneServes) {
                log.info("{} waiting for {} and none of the {} serves it ({});"
                        + " waiting up to {}", jobsWaiting(outstanding), models,
                        Plural.of(workers.size(), "connected worker"), servedBy(workers), HumanDuration.of(limit));
            } else {
                log.info("{} waiting and no worker is connected; waiting up to {}", jobsWaiting(outstanding),
                        HumanDuration.of(limit));
            }
        }
        long waited = nowNanos - sinceNanos;
        if (nowNanos - lastReportNanos >= REPORT_EVERY_NANOS) {
            lastReportNanos = nowNanos;
            log.info("still no usable worker after {} ({} connected, {} serving {}, all quarantined); {}"
                    + " waiting", HumanDuration.of(Duration.ofNanos(waited)), workers.size(), serving.size(), models,
                    Plural.of(outstanding, "job"));
            if (allQuarantined) {
                listener.onAllWorkersQuarantined(Duration.ofNanos(waited), serving.size());
            } else if (noneServes) {
                listener.onNoWorkerServes(Duration.ofNanos(waited), wanted, workers);
            } else {
                listener.onWaitingForWorkers(Duration.ofNanos(waited));
            }
        }
        if (waited < limit.toNanos()) {
            return null;
        }
        String limits = HumanDuration.of(Duration.ofNanos(waited)) + " (limit " + HumanDuration.of(limit) + ")";
        if (allQuarantined) {
            String which = wanted.stream().allMatch(java.util.Objects::isNull) ? "" : " that serves " + models;
            return "every connected worker" + which + " was quarantined for " + limits
                    + " (last failure of " + serving.get(0).id() + ": " + quarantine.lastReason(serving.get(0))
                    + "); fix the workers' model API settings or start other workers";
        }
        if (noneServes) {
            return "no connected worker served " + models + " for " + limits + " (connected: " + servedBy(workers)
                    + "); start workers whose model API serves it";
        }
        return "no worker connected for " + limits + "; start workers pointed at the coordinator";
    }

    /** "1 job is", "3 jobs are". */
    private static String jobsWaiting(int n) {
        return Plural.of(n, "job") + (n == 1 ? " is" : " are");
    }

    /** "model 'a'", "models 'a', 'b'", or "jobs that name no model". */
    static String describeModels(Set<String> models) {
        List<String> named = new ArrayList<>();
        for (String m : models) {
            if (m != null) {
                named.add("'" + m + "'");
            }
        }
        if (named.isEmpty()) {
            return "jobs that name no model";
        }
        return (named.size() == 1 ? "model " : "models ") + String.join(", ", named);
    }

    /** "w1 serves a, b; w2 serves nothing it named", for at most 5 workers. */
    static String servedBy(List<WorkerHandle> workers) {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        for (WorkerHandle w : workers) {
            if (shown == 5) {
                b.append("; and ").append(workers.size() - shown).append(" more");
                break;
            }
            if (shown++ > 0) {
                b.append("; ");
            }
            b.append(w.id()).append(w.models().isEmpty() ? " named no models"
                    : " serves " + String.join(", ", w.models()));
        }
        return b.toString();
    }

    /** When the run must look again: when waiting would reach the limit, else {@code Long.MAX_VALUE}. */
    long nanosToLimit(long nowNanos) {
        return sinceNanos < 0 ? Long.MAX_VALUE : Math.max(0, sinceNanos + limit.toNanos() - nowNanos);
    }
}

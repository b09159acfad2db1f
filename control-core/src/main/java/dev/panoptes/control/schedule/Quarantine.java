package dev.panoptes.control.schedule;

import dev.panoptes.control.WorkerHandle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which workers a run trusts with new jobs. A worker earns a strike for each failure that is its
 * own (a worker-scoped failure, or an attempt that passed its deadline on it); a success, or a
 * failure that is the job's, clears its strikes. At {@link SchedulerOptions#quarantineAfter()}
 * strikes in a row it is quarantined: no new jobs for {@link SchedulerOptions#quarantineBackoff()},
 * doubling with each quarantine in a row up to {@link SchedulerOptions#maxQuarantineBackoff()}.
 * When that time is up it is on probation: one job at a time, and one more strike quarantines it
 * again at once, while one success restores it fully.
 *
 * <p>Workers are told apart by {@link WorkerKey} (id and model API), not by handle: a worker that
 * reconnects is a new handle but the same worker, so it cannot shed its strikes or its
 * quarantine by reconnecting. Time is given by the caller, in {@link System#nanoTime()} units.
 *
 * <p>Not thread-safe: owned by the thread running the scheduler's {@code run}.
 */
final class Quarantine {
    /** What happened when a strike was counted. */
    record Verdict(boolean quarantined, int strikes, Duration duration) {
        static final Verdict NONE = new Verdict(false, 0, Duration.ZERO);
    }

    /** One worker's record in this run. */
    private static final class Health {
        final String workerId;
        /**
         * The handle last quarantined, for {@link #releaseDue}: the listener is told of the end of
         * a quarantine with the handle it was told of its start with.
         */
        WorkerHandle handle;
        int strikes;
        /** Quarantines in a row, for the doubling; cleared by a success. */
        int quarantinesInARow;
        /** Quarantines in the whole run, for the report. */
        int quarantines;
        long untilNanos;
        boolean quarantined;
        boolean probation;
        String lastReason;

        Health(WorkerHandle worker) {
            this.workerId = worker.id();
            this.handle = worker;
        }
    }

    private final int strikesAllowed;
    private final long firstBackoffNanos;
    private final long maxBackoffNanos;
    private final Map<WorkerKey, Health> health = new HashMap<>();

    Quarantine(SchedulerOptions options) {
        this.strikesAllowed = options.quarantineAfter();
        this.firstBackoffNanos = options.quarantineBackoff().toNanos();
        this.maxBackoffNanos = options.maxQuarantineBackoff().toNanos();
    }

    /** The worker did a job: it is fully trusted again. */
    void onSuccess(WorkerHandle worker) {
        Health h = get(worker);
        if (h != null) {
            h.strikes = 0;
            h.quarantinesInARow = 0;
            h.probation = false;
        }
    }

    /** The worker failed in a way that is the job's: its model API works, so its strikes end. */
    void onJobFailure(WorkerHandle worker) {
        Health h = get(worker);
        if (h != null) {
            h.strikes = 0;
        }
    }

    /**
     * Counts a failure that is the worker's own.
     *
     * @param reason what went wrong, kept for the report
     * @return whether this strike quarantined the worker, and for how long
     */
    Verdict strike(WorkerHandle worker, String reason, long nowNanos) {
        Health h = health.computeIfAbsent(WorkerKey.of(worker), k -> new Health(worker));
        h.lastReason = reason;
        if (h.quarantined) {
            // Jobs it held when it was quarantined may still fail; they add nothing new.
            return Verdict.NONE;
        }
        h.strikes++;
        if (h.strikes < strikesAllowed && !h.probation) {
            return new Verdict(false, h.strikes, Duration.ZERO);
        }
        int doublings = Math.min(h.quarantinesInARow, 30);
        long backoff = firstBackoffNanos > (maxBackoffNanos >> doublings) ? maxBackoffNanos
                : Math.min(maxBackoffNanos, firstBackoffNanos << doublings);
        h.quarantinesInARow++;
        h.quarantines++;
        h.quarantined = true;
        h.handle = worker;
        h.probation = false;
        h.untilNanos = nowNanos + backoff;
        int strikes = h.strikes;
        h.strikes = 0;
        return new Verdict(true, strikes, Duration.ofNanos(backoff));
    }

    /** True while the worker may get no new job. */
    boolean isQuarantined(WorkerHandle worker) {
        Health h = get(worker);
        return h != null && h.quarantined;
    }

    /**
     * The most jobs the run may have on this worker at once: its capacity, or one while it is on
     * probation, or none while it is quarantined.
     */
    int slotLimit(WorkerHandle worker) {
        Health h = get(worker);
        if (h == null) {
            return worker.capacity();
        }
        if (h.quarantined) {
            return 0;
        }
        return h.probation ? 1 : worker.capacity();
    }

    /**
     * Ends the quarantines that are due, putting those workers on probation.
     *
     * @return the workers released, in no particular order
     */
    List<WorkerHandle> releaseDue(long nowNanos) {
        if (health.isEmpty()) {
            // The usual run, without a strike: asked once per round of decisions, it allocates nothing.
            return List.of();
        }
        List<WorkerHandle> released = new ArrayList<>();
        for (Health h : health.values()) {
            if (h.quarantined && h.untilNanos - nowNanos <= 0) {
                h.quarantined = false;
                h.probation = true;
                released.add(h.handle);
            }
        }
        return released;
    }

    /** Nanoseconds until the next quarantine ends (0 when one is due), or {@code Long.MAX_VALUE} when none is on. */
    long nanosToNextRelease(long nowNanos) {
        if (health.isEmpty()) {
            return Long.MAX_VALUE;
        }
        long next = Long.MAX_VALUE;
        boolean found = false;
        for (Health h : health.values()) {
            if (h.quarantined) {
                long wait = h.untilNanos - nowNanos;
                if (!found || wait < next) {
                    next = wait;
                    found = true;
                }
            }
        }
        return found ? Math.max(0, next) : Long.MAX_VALUE;
    }

    /** The record of the worker (of any connection of it), or null when it has none. */
    private Health get(WorkerHandle worker) {
        // The common case, no strike in the whole run, makes no key on the dispatch path.
        return health.isEmpty() ? null : health.get(WorkerKey.of(worker));
    }

    /** True when at least one worker is quarantined now. */
    boolean anyQuarantined() {
        for (Health h : health.values()) {
            if (h.quarantined) {
                return true;
            }
        }
        return false;
    }

    /** The last reason a worker was given a strike, or null. */
    String lastReason(WorkerHandle worker) {
        Health h = get(worker);
        return h == null ? null : h.lastReason;
    }

    /** Every worker quarantined at least once in this run, by worker id, merged across model APIs. */
    List<RunReport.Quarantined> report() {
        Map<String, RunReport.Quarantined> byId = new LinkedHashMap<>();
        for (Health h : health.values()) {
            if (h.quarantines == 0) {
                continue;
            }
            byId.merge(h.workerId, new RunReport.Quarantined(h.workerId, h.quarantines, h.lastReason),
                    (a, b) -> new RunReport.Quarantined(a.workerId(), a.times() + b.times(), b.lastReason()));
        }
        return List.copyOf(byId.values());
    }
}

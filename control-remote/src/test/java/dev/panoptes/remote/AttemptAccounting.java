package dev.panoptes.remote;

import dev.panoptes.control.AttemptTimeoutException;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.WorkerHandle;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What each failed attempt must cost its job, as docs/DESIGN.md ("Failure has an owner") says,
 * worked out on its own from the failures a run reports and compared with the attempt numbers
 * the run gives: a refused dispatch costs nothing; a job's first {@code maxWorkerFaults}
 * worker-scoped failures cost nothing, later ones one attempt each; any other failure (a
 * timeout, a lost connection, a transient failure) costs one; a job-scoped failure is never
 * retried; a job is given up on exactly when its attempts are spent. A timeout also strikes its
 * worker: a quarantine whose last strike was a timeout is counted, for the test to see that it
 * happens at all.
 *
 * <p>Driven by the run's thread (the listener's callbacks).
 */
final class AttemptAccounting {
    private final int maxAttempts;
    private final int maxWorkerFaults;
    private final Consumer<String> violations;
    /** Failures that spent an attempt, per job. */
    private final Map<JobId, Integer> charged = new HashMap<>();
    private final Map<JobId, Integer> workerFaults = new HashMap<>();
    private int dispatches;
    private int refusals;
    private int freeWorkerFaults;
    private int chargedWorkerFaults;
    private int timeouts;
    private int gaveUp;
    private int timeoutQuarantines;

    AttemptAccounting(int maxAttempts, int maxWorkerFaults, Consumer<String> violations) {
        this.maxAttempts = maxAttempts;
        this.maxWorkerFaults = maxWorkerFaults;
        this.violations = violations;
    }

    /** What the checks saw, summed over schedules. */
    record Seen(int dispatches, int refusals, int freeWorkerFaults, int chargedWorkerFaults, int timeouts, int gaveUp,
                int timeoutQuarantines) {
        Seen plus(Seen o) {
            return new Seen(dispatches + o.dispatches, refusals + o.refusals, freeWorkerFaults + o.freeWorkerFaults,
                    chargedWorkerFaults + o.chargedWorkerFaults, timeouts + o.timeouts, gaveUp + o.gaveUp,
                    timeoutQuarantines + o.timeoutQuarantines);
        }
    }

    Seen seen() {
        return new Seen(dispatches, refusals, freeWorkerFaults, chargedWorkerFaults, timeouts, gaveUp,
                timeoutQuarantines);
    }

    int dispatches() {
        return dispatches;
    }

    void dispatched(Job job, WorkerHandle worker, int attempt) {
        dispatches++;
        int spent = charged.getOrDefault(job.id(), 0);
        if (attempt != spent + 1) {
            violations.accept("job " + job.id() + " was sent to " + worker.id() + " as attempt " + attempt + " after "
                    + spent + " failures that cost an attempt (it should be attempt " + (spent + 1) + ")");
        }
        if (attempt > maxAttempts) {
            violations.accept("job " + job.id() + " was sent as attempt " + attempt + " of " + maxAttempts);
        }
    }

    void retried(Job job, WorkerHandle worker, Throwable cause, int attempt) {
        int spent = charged.getOrDefault(job.id(), 0) + cost(job, cause);
        charged.put(job.id(), spent);
        if (attempt != spent) {
            violations.accept("job " + job.id() + " is retried after " + cause + " with attempt " + attempt
                    + " spent, but " + spent + " of its failures cost an attempt");
        }
        if (spent >= maxAttempts) {
            violations.accept("job " + job.id() + " is retried after its " + spent + "th attempt, the last allowed");
        }
    }

    /** What the failure costs the job; a job-scoped failure must never come here. */
    private int cost(Job job, Throwable cause) {
        if (cause instanceof DispatchRefusedException) {
            refusals++;
            return 0;
        }
        FailureScope scope = cause instanceof ControlException ce ? ce.scope() : FailureScope.TRANSIENT;
        if (scope == FailureScope.JOB) {
            violations.accept("job " + job.id() + " is retried after a job-scoped failure: " + cause);
            return 0;
        }
        if (scope == FailureScope.WORKER) {
            int faults = workerFaults.merge(job.id(), 1, Integer::sum);
            if (faults <= maxWorkerFaults) {
                freeWorkerFaults++;
                return 0;
            }
            chargedWorkerFaults++;
            return 1;
        }
        if (cause instanceof AttemptTimeoutException) {
            timeouts++;
        }
        return 1;
    }

    /** The job failed for good; {@code attempts} is what the run says it spent. */
    void failed(Job job, String reason, int attempts) {
        int spent = charged.getOrDefault(job.id(), 0);
        if (reason.startsWith("gave up after")) {
            gaveUp++;
            // The failure that ended it was not reported as a retry: it is the attempt in flight.
            if (attempts != maxAttempts || spent != maxAttempts - 1) {
                violations.accept("job " + job.id() + " was given up on after " + attempts + " attempts with " + spent
                        + " failures that cost one before the last; the limit is " + maxAttempts + ": " + reason);
            }
        } else if (attempts != spent + 1) {
            violations.accept("job " + job.id() + " failed on attempt " + attempts + " after " + spent
                    + " failures that cost one (it was on attempt " + (spent + 1) + "): " + reason);
        }
    }

    void quarantined(String reason) {
        if (reason.contains("within its deadline")) {
            timeoutQuarantines++;
        }
    }
}

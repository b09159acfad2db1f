package dev.panoptes.coordinator;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.UnsendableJobs;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A run's jobs checked against the frame limit before anything runs: those that can never be
 * sent are reported with their suite lines, are not sent, and are recorded as failed jobs (so
 * that the summary names them, the exit code is 3, and a run with a larger
 * {@code --max-frame-bytes} sends them: a failed job is not complete). The others run as usual.
 *
 * <p>Not thread-safe; the coordinator's run thread uses it.
 */
final class FrameLimitCheck {
    private final List<UnsendableJobs.Unsendable> unsendable;
    private final List<Job> jobs;
    private final int maxFrameBytes;
    private final Suite suite;

    private FrameLimitCheck(List<UnsendableJobs.Unsendable> unsendable, List<Job> jobs, int maxFrameBytes,
                            Suite suite) {
        this.unsendable = unsendable;
        this.jobs = jobs;
        this.maxFrameBytes = maxFrameBytes;
        this.suite = suite;
    }

    /** Checks every job of the plan against {@code maxFrameBytes}. */
    static FrameLimitCheck of(JobPlan plan, Suite suite, int maxFrameBytes) {
        return new FrameLimitCheck(UnsendableJobs.of(plan, suite, maxFrameBytes), plan.jobs(), maxFrameBytes, suite);
    }

    /** True when every job can be sent. */
    boolean allFit() {
        return unsendable.isEmpty();
    }

    /** One line per vignette (or job) too big, and what to do; nothing when all fit. */
    void report(PrintWriter err) {
        if (unsendable.isEmpty()) {
            return;
        }
        long distinct = unsendable.stream().filter(u -> !u.repeat()).count();
        err.printf("suite %s: %d %s too big for the frame limit of %d bytes (--max-frame-bytes); %s alone,"
                + " everything else runs:%n", suite.name(), distinct, distinct == 1 ? "job is" : "jobs are",
                maxFrameBytes, distinct == 1 ? "it fails" : "each fails");
        for (UnsendableJobs.Unsendable u : unsendable) {
            if (!u.repeat()) {
                err.println("  " + u.problem());
            }
        }
        err.flush();
    }

    /**
     * The jobs to give the scheduler: all but those that cannot be sent, unless the store holds
     * them complete already (a run with a larger limit answered them): the scheduler skips those.
     */
    List<Job> jobsToRun(JdbcResultStore store) {
        if (unsendable.isEmpty()) {
            return jobs;
        }
        Set<JobId> complete = store.completedAmong(unsendableJobs());
        Set<JobId> left = new HashSet<>();
        for (UnsendableJobs.Unsendable u : unsendable) {
            if (!complete.contains(u.job().id())) {
                left.add(u.job().id());
            }
        }
        List<Job> run = new ArrayList<>(jobs.size());
        for (Job j : jobs) {
            if (!left.contains(j.id())) {
                run.add(j);
            }
        }
        return run;
    }

    /**
     * Records every job that cannot be sent and is not complete as failed (0 attempts), and
     * returns the scheduler's report with them among its failed jobs.
     */
    RunReport recordFailures(JdbcResultStore store, RunReport report) {
        if (unsendable.isEmpty()) {
            return report;
        }
        Set<JobId> complete = store.completedAmong(unsendableJobs());
        List<RunReport.FailedJob> failed = new ArrayList<>(report.failed());
        for (UnsendableJobs.Unsendable u : unsendable) {
            if (complete.contains(u.job().id())) {
                continue;
            }
            store.recordFailure(u.job(), u.problem(), 0);
            failed.add(new RunReport.FailedJob(u.job().id(), u.problem(), 0));
        }
        return new RunReport(report.totalJobs() + failed.size() - report.failed().size(), report.skipped(),
                report.completed(), failed, report.attempts(), report.redeliveries(), report.duplicates(),
                report.completedByWorker(), report.elapsed(), report.quarantined());
    }

    private List<Job> unsendableJobs() {
        List<Job> list = new ArrayList<>(unsendable.size());
        unsendable.forEach(u -> list.add(u.job()));
        return list;
    }
}

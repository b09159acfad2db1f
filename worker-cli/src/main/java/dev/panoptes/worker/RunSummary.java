package dev.panoptes.worker;

import dev.panoptes.control.Job;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.suite.JobPlan;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The end-of-run summary the {@code coordinator} command prints: counts from the scheduler's
 * report, and tokens, latency and accuracy computed from the records in the store for this
 * run's jobs (including records stored by an earlier, resumed run).
 *
 * @param jobs              jobs in the run
 * @param jobsCompleted     jobs complete now (this run or an earlier one)
 * @param jobsSkipped       jobs already complete when the run started
 * @param failures          jobs that failed for good in this run
 * @param vignettes         vignettes in the run
 * @param vignettesStored   vignettes with a stored record
 * @param redeliveries      redeliveries in this run
 * @param duplicates        duplicate records ignored in this run
 * @param tokens            tokens reported across the stored records
 * @param latencyP50Ms      median model-call latency, or -1 when no record has one
 * @param latencyP95Ms      95th percentile model-call latency, or -1
 * @param graded            stored records whose vignette has an expected answer
 * @param correct           of those, how many match it exactly (after trimming)
 * @param elapsed           wall-clock time of this run
 * @param quarantined       workers quarantined during this run
 */
public record RunSummary(int jobs, int jobsCompleted, int jobsSkipped, List<RunReport.FailedJob> failures,
                         int vignettes, long vignettesStored, long redeliveries, long duplicates, Usage tokens,
                         long latencyP50Ms, long latencyP95Ms, long graded, long correct, Duration elapsed,
                         List<RunReport.Quarantined> quarantined) {

    /** Computes the summary of a run from its plan, its report and the store. */
    public static RunSummary of(JobPlan plan, RunReport report, ResultStore store) {
        // One map entry per job, not per vignette: a suite of a million vignettes stays small.
        Map<String, Job> jobs = new HashMap<>();
        plan.jobs().forEach(job -> jobs.put(job.id().value(), job));
        Tally tally = new Tally();
        store.forEachRecord(r -> {
            Job job = jobs.get(r.jobId().value());
            Vignette v = job == null ? null : vignette(job, r.record().vignetteId());
            if (v != null) {
                tally.add(v, r.record());
            }
        });
        long[] latencies = Arrays.copyOf(tally.latencies, tally.latencyCount);
        Arrays.sort(latencies);
        return new RunSummary(plan.jobs().size(), report.completed() + report.skipped(), report.skipped(),
                report.failed(), plan.vignetteCount(), tally.stored, report.redeliveries(), report.duplicates(),
                tally.tokens, percentile(latencies, 50), percentile(latencies, 95), tally.graded, tally.correct,
                report.elapsed(), report.quarantined());
    }

    private static Vignette vignette(Job job, String vignetteId) {
        for (Vignette v : job.spec().vignettes()) {
            if (v.id().equals(vignetteId)) {
                return v;
            }
        }
        return null;
    }

    /** Running totals over the stored records of one run. */
    private static final class Tally {
        long stored;
        long graded;
        long correct;
        Usage tokens = Usage.ZERO;
        long[] latencies = new long[1024];
        int latencyCount;

        void add(Vignette v, ResponseRecord record) {
            stored++;
            if (record.usage() != null) {
                tokens = tokens.plus(record.usage());
            }
            if (record.latencyMs() != null) {
                if (latencyCount == latencies.length) {
                    latencies = Arrays.copyOf(latencies, latencyCount * 2);
                }
                latencies[latencyCount++] = record.latencyMs();
            }
            if (v.expected() != null) {
                graded++;
                if (v.expected().trim().equals(record.response().trim())) {
                    correct++;
                }
            }
        }
    }

    /** True when every job of the run is complete. */
    public boolean allCompleted() {
        return failures.isEmpty() && jobsCompleted == jobs;
    }

    /** The summary as the lines a person reads at the end of a run. */
    public String render() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Run %s in %.1f s%n", allCompleted() ? "complete" : "INCOMPLETE",
                elapsed.toMillis() / 1000.0));
        sb.append(String.format(Locale.ROOT, "  jobs:        %d of %d complete%s, %d failed%n", jobsCompleted, jobs,
                jobsSkipped > 0 ? " (" + jobsSkipped + " from an earlier run)" : "", failures.size()));
        sb.append(String.format(Locale.ROOT, "  vignettes:   %d of %d stored, %d failed%n", vignettesStored, vignettes,
                vignettes - vignettesStored));
        sb.append(String.format(Locale.ROOT, "  redelivered: %d jobs; duplicates ignored: %d records%n",
                redeliveries, duplicates));
        sb.append(String.format(Locale.ROOT, "  tokens:      %d (%d prompt + %d completion)%n", tokens.totalTokens(),
                tokens.promptTokens(), tokens.completionTokens()));
        if (latencyP50Ms >= 0) {
            sb.append(String.format(Locale.ROOT, "  latency:     p50 %d ms, p95 %d ms per model call%n", latencyP50Ms,
                    latencyP95Ms));
        }
        if (graded > 0) {
            sb.append(String.format(Locale.ROOT, "  accuracy:    %.1f%% exact match (%d of %d)%n",
                    100.0 * correct / graded, correct, graded));
        }
        for (RunReport.Quarantined q : quarantined) {
            sb.append(String.format(Locale.ROOT, "  quarantined: worker %s, %d %s; its last failure: %s%n", q.workerId(),
                    q.times(), q.times() == 1 ? "time" : "times", q.lastReason()));
        }
        if (!failures.isEmpty()) {
            sb.append("  failed jobs:\n");
            for (RunReport.FailedJob f : failures.subList(0, Math.min(10, failures.size()))) {
                sb.append("    ").append(f.jobId()).append(" after ").append(f.attempts()).append(" attempts: ")
                        .append(f.reason()).append('\n');
            }
            if (failures.size() > 10) {
                sb.append("    ... and ").append(failures.size() - 10).append(" more\n");
            }
        }
        return sb.toString();
    }

    private static long percentile(long[] sorted, int p) {
        if (sorted.length == 0) {
            return -1;
        }
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}

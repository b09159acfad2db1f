package dev.panoptes.coordinator;

import dev.panoptes.control.Plural;
import dev.panoptes.control.Usage;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.PassAtK;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.control.stats.GroupMean;
import dev.panoptes.control.stats.PairedDifference;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.report.Figures;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunStats;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The end-of-run summary the {@code coordinator} command prints: counts from the scheduler's
 * report, and tokens, latency and accuracy from the run's stored records (including those stored
 * by an earlier, resumed run). Accuracy and its interval come from {@link RunStats}, as in the
 * export and the HTML report, printed by {@link Figures}, so all three show the same figures.
 *
 * @param jobs            jobs in the run
 * @param jobsCompleted   jobs complete now (this run or an earlier one)
 * @param jobsSkipped     jobs already complete when the run started
 * @param failures        jobs that failed for good in this run
 * @param answers         answers the run asks for (vignettes x models x epochs)
 * @param answersStored   answers with a stored record
 * @param redeliveries    redeliveries in this run
 * @param duplicates      duplicate records ignored in this run
 * @param tokens          tokens reported across the stored records that called a model, cached answers left out (per model in {@code stats},
 *                        printed one line each when the run has more than one model)
 * @param latencyP50Ms    median latency of an answer, or -1 when no record has one: a model call's,
 *                        retries included, or a sandboxed sample's whole run (sandbox, turns, tools
 *                        and check), whose record carries that
 * @param latencyP95Ms    95th percentile latency of an answer, or -1
 * @param elapsed         wall-clock time of this run
 * @param quarantined     workers quarantined during this run
 * @param stats           the run's statistics per model
 * @param failedAnswers   the run's failed answers per model (vignettes the model API refused)
 */
public record RunSummary(int jobs, int jobsCompleted, int jobsSkipped, List<RunReport.FailedJob> failures,
                         int answers, long answersStored, long redeliveries, long duplicates, Usage tokens,
                         long latencyP50Ms, long latencyP95Ms, Duration elapsed,
                         List<RunReport.Quarantined> quarantined, RunStats stats, FailedAnswers failedAnswers) {

    /** The summary of a run from its plan, its report and what the store holds about it. */
    public static RunSummary of(JobPlan plan, RunReport report, RunData data, String groupBy) {
        return of(plan, report, data, groupBy, FailedAnswers.NONE);
    }

    /** As {@link #of(JobPlan, RunReport, RunData, String)}, with the run's failed answers. */
    public static RunSummary of(JobPlan plan, RunReport report, RunData data, String groupBy,
                                FailedAnswers failedAnswers) {
        return of(plan.jobs().size(), plan.vignetteCount(), report, data, groupBy, failedAnswers);
    }

    /**
     * As {@link #of(JobPlan, RunReport, RunData, String, FailedAnswers)}, from the plan's counts
     * alone ({@code jobs} planned, {@code answers} asked), so that a caller can let the plan go first.
     */
    public static RunSummary of(int jobs, int answers, RunReport report, RunData data, String groupBy,
                                FailedAnswers failedAnswers) {
        return of(jobs, answers, report, RunStats.of(data, groupBy), failedAnswers);
    }

    /**
     * As {@link #of(int, int, RunReport, RunData, String, FailedAnswers)}, from the run's
     * statistics (as the coordinator computes them at the end of a run, streamed from the store
     * without holding its answers: {@code RunDataLoader.stats}).
     */
    public static RunSummary of(int jobs, int answers, RunReport report, RunStats stats,
                                FailedAnswers failedAnswers) {
        long prompt = 0;
        long completion = 0;
        for (RunStats.ModelStats m : stats.models()) {
            prompt += m.promptTokens();
            completion += m.completionTokens();
        }
        return new RunSummary(jobs, report.completed() + report.skipped(), report.skipped(),
                report.failed(), answers, stats.totalSamples(), report.redeliveries(),
                report.duplicates(), new Usage(prompt, completion),
                stats.latencyP50Ms() == null ? -1 : stats.latencyP50Ms(),
                stats.latencyP95Ms() == null ? -1 : stats.latencyP95Ms(), report.elapsed(), report.quarantined(),
                stats, failedAnswers);
    }

    /** True when every job of the run is complete. */
    public boolean allCompleted() {
        return failures.isEmpty() && jobsCompleted == jobs;
    }

    /**
     * True when every job is complete and the failed answers are no more than {@code maxErrorRate}
     * (0 to 1) of the answers stored: what decides a zero exit code.
     */
    public boolean succeeded(double maxErrorRate) {
        return allCompleted() && !failedAnswers.exceed(maxErrorRate);
    }

    /** The summary as the lines a person reads at the end of a run. */
    public String render() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Run %s in %.1f s (run id %s)%n", allCompleted() ? "complete" : "INCOMPLETE",
                elapsed.toMillis() / 1000.0, stats.info().runId()));
        sb.append(String.format(Locale.ROOT, "  jobs:        %d of %d complete%s, %d failed%n", jobsCompleted, jobs,
                jobsSkipped > 0 ? " (" + jobsSkipped + " from an earlier run)" : "", failures.size()));
        // "Missing" answers are those of failed jobs, or of jobs never sent when a budget stopped the
        // run; a failed answer is stored, and counted apart.
        long failedStored = failedAnswers.failed();
        long missing = answers - answersStored;
        sb.append(String.format(Locale.ROOT, "  answers:     %d of %d stored%s, %d missing%s%n", answersStored, answers,
                failedStored == 0 ? "" : " (" + (failedStored == 1 ? "1 of them a failed answer"
                        : failedStored + " of them failed answers") + ", below)",
                missing, missing == 0 ? "" : failures.isEmpty() ? " (not sent: the run stopped short)"
                        : missing == 1 ? " (its job failed)" : " (their jobs failed)"));
        sb.append(failedAnswers.render());
        sb.append(String.format(Locale.ROOT, "  redelivered: %s; duplicates ignored: %s%n",
                Plural.of(redeliveries, "job"), Plural.of(duplicates, "record")));
        RunStats.CacheHits cached = stats.cacheHits();
        if (cached.answers() > 0) {
            // "all": a run the cache answered whole asked no model (and needed none to be up).
            sb.append(String.format(Locale.ROOT, "  cache hits:  %s%s served from the database without a model call"
                    + " (answered first in %s)%n", cached.answers() == answers ? "all " : "",
                    Plural.of(cached.answers(), "answer"),
                    Plural.of(cached.fromRuns().size(), "earlier run")));
        }
        renderTokens(sb, tokens, stats);
        if (latencyP50Ms >= 0) {
            sb.append(String.format(Locale.ROOT, "  latency:     p50 %d ms, p95 %d ms per answer%n", latencyP50Ms,
                    latencyP95Ms));
        }
        renderAccuracy(sb, stats);
        for (RunReport.Quarantined q : quarantined) {
            sb.append(String.format(Locale.ROOT, "  quarantined: worker %s, %d %s; its last failure: %s%n", q.workerId(),
                    q.times(), Plural.noun(q.times(), "time"), q.lastReason()));
        }
        if (!failures.isEmpty()) {
            sb.append("  failed jobs:\n");
            for (RunReport.FailedJob f : failures.subList(0, Math.min(10, failures.size()))) {
                sb.append("    ").append(f.jobId()).append(" after ").append(Plural.of(f.attempts(), "attempt"))
                        .append(": ")
                        .append(f.reason()).append('\n');
            }
            if (failures.size() > 10) {
                sb.append("    ... and ").append(failures.size() - 10).append(" more\n");
            }
        }
        return sb.toString();
    }

    /**
     * The tokens lines, which say whose tokens they are: those this run spent calling models
     * ({@code spent}, what its cost is reckoned from; per model too when it has several) and, when
     * the response cache served answers,
     * on a line of its own the tokens those answers record, which earlier runs spent. Without that
     * second line a cached run read "tokens: 0" beside answers that each show their tokens.
     */
    public static void renderTokens(StringBuilder sb, Usage spent, RunStats stats) {
        sb.append(String.format(Locale.ROOT, "  tokens:      %d spent by this run's model calls (%d prompt + %d"
                + " completion)%n", spent.totalTokens(), spent.promptTokens(), spent.completionTokens()));
        if (stats.models().size() > 1) {
            for (RunStats.ModelStats m : stats.models()) {
                sb.append(String.format(Locale.ROOT, "    %s: %d (%d prompt + %d completion)%n", m.model(),
                        m.promptTokens() + m.completionTokens(), m.promptTokens(), m.completionTokens()));
            }
        }
        RunStats.CacheHits cached = stats.cacheHits();
        if (cached.answers() > 0) {
            Usage held = cached.tokens();
            sb.append(String.format(Locale.ROOT, "               %d more in the %s the cache served (%d prompt + %d"
                    + " completion), spent by %s%n", held.totalTokens(), Plural.of(cached.answers(), "answer"),
                    held.promptTokens(), held.completionTokens(),
                    cached.fromRuns().size() == 1 ? "the run that answered them" : "the runs that answered them"));
        }
    }

    /**
     * The accuracy lines of a run's statistics, as the summary prints them (also after a
     * {@code rescore}): per model, per group when grouped, and the paired comparisons, headed by
     * the scorer and the scoring they come from.
     */
    public static void renderAccuracy(StringBuilder sb, RunStats stats) {
        // What scored the answers: a vignette's sandbox check, or its own scorer, overrides the
        // run's (RunScoring.specFor); when that is not known, multiple-choice vignettes are scored
        // acc whatever the run's text scorer.
        String runScorer = !stats.scorers().isEmpty() ? String.join(" and ", stats.scorers())
                : !stats.choiceMetrics().isEmpty() && !Scorers.isLoglikelihood(stats.info().scorer())
                ? "acc" : stats.info().scorer();
        // A loglikelihood task's acc is lm-eval's for that output type: whether the continuation is greedy.
        boolean continuations = !stats.choiceMetrics().perplexity().isEmpty();
        String scorer = runScorer == null ? "" : " (" + runScorer
                + (continuations && "acc".equals(runScorer)
                ? ": is_greedy, whether the continuation is the model's greedy one" : "")
                + (stats.info().scoring() == null ? "" : ", scoring " + stats.info().scoring().number()) + ")";
        boolean any = stats.models().stream().anyMatch(m -> m.scored() > 0);
        if (!any) {
            int unscored = stats.models().stream().mapToInt(RunStats.ModelStats::unscored).sum();
            sb.append(unscored == 0 ? "  accuracy:    no answer to score\n"
                    : "  accuracy:    no answer scored: " + unscored + " unscored (no expected answer, or no grade)\n");
            return;
        }
        sb.append("  accuracy").append(scorer).append(", mean score per model; 95% CI: ").append(Accuracy.METHOD)
                .append(":\n");
        for (RunStats.ModelStats m : stats.models()) {
            sb.append("    ").append(m.model()).append(": ").append(line(m.accuracy()));
            if (m.failedAnswers() > 0) {
                sb.append("; ").append(Plural.of(m.failedAnswers(), "failed answer")).append(" scored 0 (without them: ")
                        .append(line(m.withoutFailed())).append(')');
            }
            if (m.unscored() > 0) {
                sb.append("; ").append(Plural.of(m.unscored(), "answer")).append(" unscored");
            }
            sb.append('\n');
            groupLines(sb, stats.groupBy(), m.byGroup());
        }
        if (!stats.passAtK().isEmpty()) {
            sb.append("  pass@k over epochs, ").append(PassAtK.METHOD).append(":\n");
            for (Map.Entry<String, Map<Integer, Estimate>> m : stats.passAtK().byModel().entrySet()) {
                sb.append("    ").append(m.getKey()).append(':');
                String sep = " ";
                for (Map.Entry<Integer, Estimate> k : m.getValue().entrySet()) {
                    Estimate e = k.getValue();
                    sb.append(sep).append("pass@").append(k.getKey()).append(' ').append(Figures.ratio(e.mean()))
                            .append(" (95% CI ").append(Figures.ratio(e.ciLow())).append('-')
                            .append(Figures.ratio(e.ciHigh())).append(')');
                    sep = ", ";
                }
                sb.append(", ").append(Plural.of(m.getValue().values().iterator().next().n(), "problem")).append('\n');
            }
        }
        for (Map.Entry<String, Map<String, Estimate>> metric : stats.choiceMetrics().byMetric().entrySet()) {
            if (metric.getKey().equals(runScorer)) {
                continue;
            }
            sb.append("  ").append(metric.getKey()).append(" (multiple choice, recomputed from the answers'"
                    + " log-likelihoods); 95% CI: ").append(Accuracy.METHOD).append(":\n");
            for (Map.Entry<String, Estimate> m : metric.getValue().entrySet()) {
                sb.append("    ").append(m.getKey()).append(": ").append(line(m.getValue())).append('\n');
                groupLines(sb, stats.groupBy(), stats.choiceMetrics().byGroup().getOrDefault(metric.getKey(), Map.of())
                        .getOrDefault(m.getKey(), Map.of()));
            }
        }
        if (continuations) {
            sb.append("  perplexity (loglikelihood: exp(-mean log-likelihood) of the continuations, lower is better);"
                    + " 95% CI: ").append(Perplexity.METHOD).append(":\n");
            for (Map.Entry<String, Perplexity.Figure> m : stats.choiceMetrics().perplexity().entrySet()) {
                sb.append("    ").append(m.getKey()).append(": ").append(m.getValue().format());
                int failed = stats.models().stream().filter(x -> x.model().equals(m.getKey()))
                        .mapToInt(RunStats.ModelStats::failedAnswers).sum();
                if (failed > 0) {
                    sb.append("; ").append(Plural.of(failed, "failed answer")).append(" (no log-likelihood) in none");
                }
                sb.append('\n');
                // Per group (a group file's tasks): each task's own; perplexity has no group aggregate.
                for (Map.Entry<String, Perplexity.Figure> g : stats.choiceMetrics().perplexityByGroup()
                        .getOrDefault(m.getKey(), Map.of()).entrySet()) {
                    sb.append("      ").append(stats.groupBy()).append('=').append(g.getKey()).append(": ")
                            .append(g.getValue().format()).append('\n');
                }
            }
        }
        if (!stats.comparison().isEmpty()) {
            sb.append("  paired differences, ").append(PairedDifference.METHOD).append(":\n");
        }
        for (RunStats.Comparison c : stats.comparison()) {
            sb.append("    ").append(c.model()).append(" - ").append(c.baseline()).append(": ")
                    .append(c.paired().format()).append('\n');
        }
    }

    /**
     * A model's figure per group, then, with two groups or more, their mean with each group counted
     * once: lm-eval's group aggregate without weight_by_size (the model's own figure above is the
     * one with it, each sample counted once).
     */
    private static void groupLines(StringBuilder sb, String groupBy, Map<String, Estimate> byGroup) {
        for (Map.Entry<String, Estimate> g : byGroup.entrySet()) {
            sb.append("      ").append(groupBy).append('=').append(g.getKey()).append(": ")
                    .append(line(g.getValue())).append('\n');
        }
        if (byGroup.size() > 1) {
            sb.append("      mean of the ").append(byGroup.size()).append(' ').append(groupBy)
                    .append(" groups, each counted once (").append(GroupMean.METHOD).append("): ")
                    .append(line(GroupMean.of(byGroup.values()))).append('\n');
        }
    }

    /**
     * "0.733 (95% CI 0.652-0.814, SE 0.081, n=30, 10 vignettes)" with the shared figures; the
     * interval's method is named once, in the heading above such lines.
     */
    static String line(Estimate e) {
        if (e.n() == 0) {
            return "no scored answers";
        }
        String size = "n=" + e.n() + (e.clustered() ? ", " + Plural.of(e.clusters(), "vignette") : "");
        String se = e.hasStandardError() ? "SE " + Figures.ratio(e.standardError()) + ", " : "";
        return Figures.ratio(e.mean()) + " (95% CI " + Figures.ratio(e.ciLow()) + "-" + Figures.ratio(e.ciHigh()) + ", "
                + se + size + ")";
    }
}

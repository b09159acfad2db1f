package dev.panoptes.report;

import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.Perplexity;
import dev.panoptes.control.stats.GroupMean;
import dev.panoptes.control.stats.PairedDifference;
import dev.panoptes.control.store.RunStop;

import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One run's section of {@link HtmlReport}: its header and its figure tables, every figure from
 * {@link RunStats} printed with {@link Figures}, every string HTML-escaped. Figure cells carry
 * {@code data-run}, {@code data-model} and {@code data-metric} for tools and tests.
 *
 * <p>One instance per section, used by one thread.
 */
final class RunSectionHtml {
    /** The most failures listed per run; the rest are counted. */
    static final int MAX_LISTED_FAILURES = 1_000;

    private final Writer out;
    private final RunStats stats;
    private final String run;
    private final RunCosts costs;
    private final NotStored notStored;

    private RunSectionHtml(Writer out, RunStats stats, RunCosts costs, NotStored notStored) {
        this.notStored = notStored;
        this.out = out;
        this.stats = stats;
        this.run = Html.escape(stats.info().runId());
        this.costs = costs;
    }

    /** The section of a run whose figures are {@code stats}; with {@code costs} priced, its cost too. */
    static void write(Writer out, RunStats stats, RunCosts costs, List<FailureRow> failures) throws IOException {
        write(out, stats, costs, NotStored.of(stats.info(), Prices.NONE), failures, List.of());
    }

    /**
     * The section, its failures listing the jobs that failed for good and the failed answers
     * (samples the model API gave no answer for), each with its reason, and what the run spent on
     * answers never stored ({@code notStored}, a sentence under its tokens when any).
     */
    static void write(Writer out, RunStats stats, RunCosts costs, NotStored notStored, List<FailureRow> failures,
                      List<SampleRow> failedAnswers) throws IOException {
        RunSectionHtml section = new RunSectionHtml(out, stats, costs, notStored);
        out.write("<section class=\"run\" data-run=\"" + section.run + "\">\n");
        section.header();
        section.accuracy();
        section.perplexity();
        section.comparison();
        section.groups();
        section.volume();
        section.workers();
        section.failures(failures);
        section.failedAnswers(failedAnswers);
        out.write("</section>\n");
    }

    /** The run card: every parameter of the run ({@link RunCard}), unknown ones said to be unknown. */
    private void header() throws IOException {
        out.write("<h2>Run <code>" + run + "</code></h2>\n");
        state();
        out.write("<dl class=\"info run-card\">\n");
        for (RunCard.Entry entry : RunCard.of(stats.info())) {
            out.write("<dt>" + Html.escape(entry.label()) + "</dt><dd data-card=\"" + entry.key() + "\""
                    + (entry.value() == null ? " class=\"muted\"" : "") + ">" + Html.escape(entry.shown())
                    + "</dd>\n");
        }
        out.write("</dl>\n");
    }

    /**
     * Where the run stands, first thing under its title: complete, or incomplete with what is
     * stored of what it asks, what is missing and the failed jobs, so that figures of a partial run
     * are not read as the whole suite's.
     */
    private void state() throws IOException {
        RunInfo info = stats.info();
        long expected = info.suite() == null ? -1
                : (long) info.vignettes() * Math.max(1, info.models().size()) * info.epochs();
        long stored = stats.totalSamples();
        int failedJobs = stats.totalFailures();
        boolean complete = expected >= 0 ? stored >= expected && failedJobs == 0
                : info.finishedAt() != null && failedJobs == 0;
        String text;
        if (complete) {
            text = "Complete: " + Figures.count(stored) + " of " + Figures.count(Math.max(expected, stored))
                    + " answers stored.";
        } else {
            text = "Incomplete: " + (expected < 0 ? Figures.count(stored) + " answers stored (the run did not"
                    + " record how many it asks for)" : Figures.count(stored) + " of " + Figures.count(expected)
                    + " answers stored, " + Figures.count(Math.max(0, expected - stored)) + " missing")
                    + (failedJobs == 0 ? "" : ", " + Figures.count(failedJobs) + (failedJobs == 1 ? " failed job"
                    : " failed jobs")) + (info.finishedAt() == null ? "; it stopped before its summary" : "")
                    + ". The figures below are of the answers stored.";
        }
        RunStop stop = info.stop();
        String state = complete ? "complete" : "incomplete";
        if (stop != null) {
            // What stopped its last sitting comes first: it is why the run is not whole (or not passed).
            state = RunStop.BUDGET.equals(stop.cause()) ? "stopped-by-budget" : "failed-gate";
            text = (RunStop.BUDGET.equals(stop.cause()) ? "Stopped by its budget: " : "Failed a gate: ")
                    + stop.reason() + ". " + text;
        }
        out.write("<p class=\"run-state\" data-run=\"" + run + "\" data-state=\"" + state + "\">"
                + Html.escape(text) + "</p>\n");
    }

    private void accuracy() throws IOException {
        out.write("<h3>Accuracy</h3>\n<p class=\"method\" id=\"ci-method\">95% CI: "
                + Html.escape(Accuracy.METHOD) + "</p>\n<div class=\"scroll\"><table class=\"accuracy\">\n"
                + "<thead><tr><th>Model</th><th>Accuracy</th><th>95% CI low</th><th>95% CI high</th><th>SE</th>"
                + "<th>n</th><th>Vignettes</th><th>Failed answers</th><th>Accuracy without failed</th>"
                + "<th>0 &ndash; 1</th></tr></thead>\n<tbody>\n");
        for (RunStats.ModelStats m : stats.models()) {
            Estimate e = m.accuracy();
            String model = Html.escape(m.model());
            modelRow(model);
            estimateCells(model, e);
            figure(model, "failed-answers", Figures.count(m.failedAnswers()));
            figure(model, "accuracy-without-failed", Figures.ratio(m.withoutFailed().mean()));
            out.write("<td>" + bar(e) + "</td></tr>\n");
        }
        out.write("</tbody></table></div>\n<p class=\"note\">Mean score over scored samples; a failed answer (the"
                + " model API gave none for the vignette) counts as wrong, 0, and the figure without failed answers"
                + " is beside it. The interval is the Wilson score interval with the effective number of samples"
                + " when vignettes were asked in several epochs: n divided by the design effect, the number of"
                + " vignettes when epochs all agree. SE is the standard error of the mean, cluster-robust by"
                + " vignette; n/a with fewer than two samples (or vignettes).</p>\n");
    }

    /** A loglikelihood task's perplexity per model, with its interval; nothing for other runs. */
    private void perplexity() throws IOException {
        Map<String, Perplexity.Figure> byModel = stats.choiceMetrics().perplexity();
        if (byModel.isEmpty()) {
            return;
        }
        out.write("<h3>Perplexity</h3>\n<p class=\"method\">95% CI: " + Html.escape(Perplexity.METHOD)
                + "</p>\n<div class=\"scroll\"><table class=\"perplexity\">\n<thead><tr><th>Model</th>"
                + "<th>Perplexity</th><th>95% CI low</th><th>95% CI high</th><th>SE</th><th>Mean log-likelihood</th>"
                + "<th>n</th><th>Vignettes</th></tr></thead>\n<tbody>\n");
        for (Map.Entry<String, Perplexity.Figure> m : byModel.entrySet()) {
            Perplexity.Figure f = m.getValue();
            String model = Html.escape(m.getKey());
            modelRow(model);
            figure(model, "perplexity", Figures.ratio(f.perplexity()));
            figure(model, "perplexity-ci-low", Figures.ratio(f.ciLow()));
            figure(model, "perplexity-ci-high", Figures.ratio(f.ciHigh()));
            figure(model, "perplexity-stderr", Figures.ratio(f.standardError()));
            figure(model, "mean-loglikelihood", String.format(Locale.ROOT, "%.4f", f.meanLoglikelihood()));
            figure(model, "perplexity-n", Figures.count(f.n()));
            figure(model, "perplexity-clusters", Figures.count(f.clusters()));
            out.write("</tr>\n");
        }
        out.write("</tbody></table></div>\n<p class=\"note\">lm-eval's perplexity of a loglikelihood task,"
                + " exp(-mean log-likelihood) of the continuations; lower is better. The interval is Student's t on"
                + " the mean log-likelihood (its standard error cluster-robust by vignette when epochs repeat"
                + " documents) mapped through exp(-x); SE is the delta method's, exp(-mean) times the mean's. A"
                + " failed answer has no log-likelihood and is in none. The accuracy above is lm-eval's acc for"
                + " this output type: whether the continuation is the model's greedy one.</p>\n");
    }

    /** Accuracy, SE, interval, n and vignettes: the same cells wherever an estimate is shown. */
    private void estimateCells(String model, Estimate e) throws IOException {
        figure(model, "accuracy", Figures.ratio(e.mean()));
        figure(model, "ci-low", Figures.ratio(e.ciLow()));
        figure(model, "ci-high", Figures.ratio(e.ciHigh()));
        figure(model, "stderr", Figures.ratio(e.standardError()));
        figure(model, "n", Figures.count(e.n()));
        figure(model, "clusters", Figures.count(e.clusters()));
    }

    /** Opens a table row of one model (already escaped), its name as the row's header. */
    private void modelRow(String model) throws IOException {
        out.write("<tr data-run=\"" + run + "\" data-model=\"" + model + "\"><th scope=\"row\">" + model + "</th>");
    }

    private void figure(String model, String metric, String text) throws IOException {
        out.write("<td class=\"num\" data-run=\"" + run + "\" data-model=\"" + model + "\" data-metric=\""
                + metric + "\">" + Html.escape(text) + "</td>");
    }

    /** A bar for the mean with a whisker for the interval; empty when there is no mean. */
    private static String bar(Estimate e) {
        if (Double.isNaN(e.mean())) {
            return "<div class=\"bar\"></div>";
        }
        String title = Html.escape(e.format());
        String whisker = e.hasInterval()
                ? "<div class=\"ci\" style=\"left:" + Figures.percent(e.ciLow()) + ";width:"
                + Figures.percent(e.ciHigh() - e.ciLow()) + "\"></div>"
                : "";
        return "<div class=\"bar\" title=\"" + title + "\"><div class=\"fill\" style=\"width:"
                + Figures.percent(e.mean()) + "\"></div>" + whisker + "</div>";
    }

    private void comparison() throws IOException {
        if (stats.comparison().isEmpty()) {
            return;
        }
        String baseline = Html.escape(stats.comparison().get(0).baseline());
        out.write("<h3>Compared with <code>" + baseline + "</code></h3>\n<p class=\"method\">"
                + Html.escape(PairedDifference.METHOD) + "</p>\n<div class=\"scroll\">"
                + "<table class=\"comparison\">\n<thead><tr><th>Model</th><th>Difference</th><th>95% CI low</th>"
                + "<th>95% CI high</th><th>SE</th><th>p</th><th>Shared vignettes</th></tr></thead>\n<tbody>\n");
        for (RunStats.Comparison c : stats.comparison()) {
            String model = Html.escape(c.model());
            PairedDifference d = c.paired();
            modelRow(model);
            figure(model, "difference", Figures.difference(d.difference()));
            figure(model, "difference-ci-low", Figures.difference(d.ciLow()));
            figure(model, "difference-ci-high", Figures.difference(d.ciHigh()));
            figure(model, "difference-stderr", Figures.ratio(d.standardError()));
            figure(model, "p-value", PairedDifference.p(d.pValue()));
            figure(model, "shared", Figures.count(c.sharedVignettes()));
            out.write("</tr>\n");
        }
        out.write("</tbody></table></div>\n<p class=\"note\">Paired over the vignettes both models scored:"
                + " for each, the model's mean score minus " + baseline + "'s (positive: the model scored"
                + " higher); the difference is the mean of those, its SE their standard deviation over"
                + " &radic;(shared vignettes), the interval and p-value from Student's t with one degree of freedom"
                + " fewer than shared vignettes. n/a: fewer than two shared vignettes. <code>worker.jar compare</code>"
                + " lists the vignettes whose score changed.</p>\n");
    }

    private void groups() throws IOException {
        if (stats.groupBy() == null) {
            return;
        }
        out.write("<h3>Accuracy by <code>" + Html.escape(stats.groupBy()) + "</code></h3>\n");
        String chart = GroupChartSvg.of(stats);
        if (!chart.isEmpty()) {
            out.write("<p class=\"method\">Bars: accuracy per group; whiskers: its 95% CI ("
                    + Html.escape(Accuracy.METHOD) + "), the figures of the table below.</p>\n<div class=\"scroll\">"
                    + chart + "</div>\n");
        }
        out.write("<div class=\"scroll\"><table class=\"groups\">\n<thead><tr><th>"
                + Html.escape(stats.groupBy()) + "</th><th>Model</th><th>Accuracy</th><th>95% CI low</th>"
                + "<th>95% CI high</th><th>SE</th><th>n</th><th>Vignettes</th></tr></thead>\n<tbody>\n");
        SortedSet<String> groups = new TreeSet<>();
        stats.models().forEach(m -> groups.addAll(m.byGroup().keySet()));
        for (String group : groups) {
            for (RunStats.ModelStats m : stats.models()) {
                Estimate e = m.byGroup().get(group);
                if (e == null) {
                    continue;
                }
                String model = Html.escape(m.model());
                out.write("<tr data-run=\"" + run + "\" data-model=\"" + model + "\" data-group=\""
                        + Html.escape(group) + "\"><th scope=\"row\">" + Html.escape(group) + "</th><td>"
                        + model + "</td>");
                estimateCells(model, e);
                out.write("</tr>\n");
            }
        }
        for (RunStats.ModelStats m : stats.models()) {
            if (m.byGroup().size() > 1) {
                // Each group counted once (lm-eval's weight_by_size: false); the run's accuracy weighs by size.
                String model = Html.escape(m.model());
                out.write("<tr data-run=\"" + run + "\" data-model=\"" + model + "\" data-group-mean=\"true\">"
                        + "<th scope=\"row\">mean of the " + m.byGroup().size() + " groups</th><td>" + model + "</td>");
                estimateCells(model, GroupMean.of(m.byGroup().values()));
                out.write("</tr>\n");
            }
        }
        out.write("</tbody></table></div>\n<p class=\"note\">Mean of the groups: each group counted once ("
                + Html.escape(GroupMean.METHOD) + "), lm-eval's group aggregate without weight_by_size; the run's"
                + " accuracy counts each sample once (with weight_by_size).</p>\n<p class=\"note\">Scored samples without a value for <code>"
                + Html.escape(stats.groupBy()) + "</code> are under " + RunStats.NO_GROUP + ".</p>\n");
    }

    private void volume() throws IOException {
        out.write("<h3>Samples, failures and tokens</h3>\n<div class=\"scroll\"><table class=\"volume\">\n"
                + "<thead><tr><th>Model</th><th>Samples</th><th>Scored</th><th>Unscored</th><th>Failed answers</th>"
                + "<th>Failed jobs</th>"
                + "<th>Prompt tokens</th><th>Completion tokens</th>" + (costs.pricing() ? "<th>Cost (USD)</th>" : "")
                + "</tr></thead>\n<tbody>\n");
        for (RunStats.ModelStats m : stats.models()) {
            String model = Html.escape(m.model());
            modelRow(model);
            figure(model, "samples", Figures.count(m.samples()));
            figure(model, "scored", Figures.count(m.scored()));
            figure(model, "unscored", Figures.count(m.unscored()));
            figure(model, "failed-answers", Figures.count(m.failedAnswers()));
            figure(model, "failures", Figures.count(m.failures()));
            figure(model, "prompt-tokens", Figures.count(m.promptTokens()));
            figure(model, "completion-tokens", Figures.count(m.completionTokens()));
            if (costs.pricing()) {
                figure(model, "cost-usd", costs.modelText(m.model()));
            }
            out.write("</tr>\n");
        }
        out.write("</tbody></table></div>\n");
        if (costs.pricing()) {
            out.write("<p class=\"cost\">Cost: <span data-run=\"" + run + "\" data-metric=\"cost-total\">"
                    + Html.escape(costs.totalText()) + "</span> USD" + Html.escape(costs.unpricedNote())
                    + ". Tokens at the prices given; answers the response cache served cost nothing.</p>\n");
        }
        if (!notStored.isZero()) {
            out.write("<p class=\"not-stored\" data-run=\"" + run + "\">" + Html.escape(notStored.sentence())
                    + "</p>\n");
        }
    }

    private void workers() throws IOException {
        out.write("<h3>Workers</h3>\n");
        if (stats.workers().isEmpty()) {
            out.write("<p class=\"muted\">No worker recorded a sample.</p>\n");
            return;
        }
        out.write("<div class=\"scroll\"><table class=\"workers\">\n<thead><tr><th>Worker</th><th>Jobs</th>"
                + "<th>Samples</th><th>Failures</th><th>Quarantines</th><th>p50 latency (ms)</th>"
                + "<th>p95 latency (ms)</th></tr></thead>\n<tbody>\n");
        for (RunStats.WorkerStats w : stats.workers()) {
            String worker = Html.escape(w.workerId());
            out.write("<tr data-run=\"" + run + "\" data-worker=\"" + worker + "\"><th scope=\"row\">" + worker
                    + "</th>" + num("jobs", Figures.count(w.jobs())) + num("samples", Figures.count(w.samples()))
                    + num("failures", Figures.count(w.failures()))
                    + num("quarantines", Figures.count(w.quarantines()))
                    + num("p50-ms", Figures.millis(w.latencyP50Ms()))
                    + num("p95-ms", Figures.millis(w.latencyP95Ms())) + "</tr>\n");
        }
        out.write("</tbody></table></div>\n<p class=\"note\">Latency percentiles are nearest-rank over the"
                + " worker's samples.</p>\n");
    }

    private static String num(String metric, String text) {
        return "<td class=\"num\" data-metric=\"" + metric + "\">" + Html.escape(text) + "</td>";
    }

    /** The failed answers with their reasons; nothing when there is none (the failed jobs say so). */
    private void failedAnswers(List<SampleRow> failed) throws IOException {
        if (failed.isEmpty()) {
            return;
        }
        out.write("<h3>Failed answers</h3>\n<p class=\"note\">The model API gave no answer for these vignettes;"
                + " each counts as wrong, 0.</p>\n<div class=\"scroll\"><table class=\"failed-answers\">\n<thead><tr>"
                + "<th>Model</th><th>Vignette</th><th>Epoch</th><th>Reason</th></tr></thead>\n<tbody>\n");
        int listed = Math.min(failed.size(), MAX_LISTED_FAILURES);
        for (SampleRow f : failed.subList(0, listed)) {
            out.write("<tr class=\"failed-answer\" data-run=\"" + run + "\"><td>" + Html.escape(f.model())
                    + "</td><td>" + Html.escape(f.vignetteId()) + "</td><td class=\"num\">" + f.epoch() + "</td><td>"
                    + Html.escape(f.error()) + "</td></tr>\n");
        }
        out.write("</tbody></table></div>\n");
        if (listed < failed.size()) {
            out.write("<p class=\"note\">" + Figures.count(failed.size() - listed) + " more failed answers are not"
                    + " listed.</p>\n");
        }
    }

    private void failures(List<FailureRow> failures) throws IOException {
        out.write("<h3>Failed jobs</h3>\n");
        if (failures.isEmpty()) {
            int failedAnswers = stats.models().stream().mapToInt(RunStats.ModelStats::failedAnswers).sum();
            // "None." beside failed answers read as "nothing failed": say where they are.
            out.write("<p class=\"muted\">" + (failedAnswers == 0 ? "None." : "No job failed for good; "
                    + Figures.count(failedAnswers) + (failedAnswers == 1 ? " answer" : " answers")
                    + " failed (below).") + "</p>\n");
            return;
        }
        out.write("<div class=\"scroll\"><table class=\"failures\">\n<thead><tr><th>Model</th><th>Job</th>"
                + "<th>Attempts</th><th>Reason</th></tr></thead>\n<tbody>\n");
        int listed = Math.min(failures.size(), MAX_LISTED_FAILURES);
        for (FailureRow f : failures.subList(0, listed)) {
            out.write("<tr class=\"failure\" data-run=\"" + run + "\"><td>" + Html.escape(f.model()) + "</td><td>"
                    + Html.escape(f.jobId()) + "</td><td class=\"num\">" + f.attempts() + "</td><td>"
                    + Html.escape(f.reason()) + "</td></tr>\n");
        }
        out.write("</tbody></table></div>\n");
        if (listed < failures.size()) {
            out.write("<p class=\"note\">" + Figures.count(failures.size() - listed) + " more failed jobs are not"
                    + " listed.</p>\n");
        }
    }
}

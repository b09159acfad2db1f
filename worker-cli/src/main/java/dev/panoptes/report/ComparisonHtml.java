package dev.panoptes.report;

import dev.panoptes.control.stats.PairedDifference;

import java.io.IOException;
import java.io.Writer;
import java.util.List;

/**
 * The comparison section of {@link HtmlReport} that {@code compare --out} adds: per model pair
 * the shared and left-out vignettes, the paired difference with its 95 % interval, SE and
 * p-value, and the vignettes whose score changed. Every figure is printed with {@link Figures}
 * (the p-value with {@link PairedDifference#p}), every string HTML-escaped. Figure cells carry
 * {@code data-pair} (the row's index) and {@code data-metric}. When the pairs have metrics
 * ({@link MetricComparison}: lm-eval's multiple-choice metrics, per task of a group file) a
 * second table gives each metric's paired difference overall, per group and over the groups.
 * Stateless.
 */
final class ComparisonHtml {
    /** The most changed vignettes listed per pair; the JSON output has them all. */
    static final int MAX_LISTED_CHANGES = 1_000;

    private ComparisonHtml() {
    }

    static void write(Writer out, List<ModelComparison.Result> comparisons) throws IOException {
        out.write("<section id=\"comparisons\">\n<h2>Comparison</h2>\n<p class=\"method\">"
                + Html.escape(PairedDifference.METHOD) + "; 95% CI from Student's t</p>\n");
        for (ModelComparison.Result c : comparisons) {
            if (c.scorersDiffer()) {
                // Before the figures, as on the console: they mix the models with the scorers.
                out.write("<p class=\"method scorers-differ\">Scorers differ: " + Html.escape(c.baselineName())
                        + " is scored by " + Html.escape(String.valueOf(c.baselineScorer())) + " (scoring "
                        + c.baselineScoring() + "), " + Html.escape(c.name()) + " by "
                        + Html.escape(String.valueOf(c.scorer())) + " (scoring " + c.scoring() + "), so the"
                        + " difference mixes models and scorers; pick scorings with <code>compare --scoring</code>"
                        + " or rescore one side.</p>\n");
                break;
            }
        }
        out.write("<div class=\"scroll\"><table class=\"compare\">\n<thead><tr><th>Baseline</th><th>Compared</th>"
                + "<th>Shared vignettes</th><th>Left out</th><th>Difference</th><th>95% CI low</th>"
                + "<th>95% CI high</th><th>SE</th><th>p</th><th>Changed</th></tr></thead>\n<tbody>\n");
        for (int i = 0; i < comparisons.size(); i++) {
            ModelComparison.Result c = comparisons.get(i);
            PairedDifference d = c.difference();
            out.write("<tr data-pair=\"" + i + "\"><td>" + Html.escape(c.baselineName()) + "</td><td>"
                    + Html.escape(c.name()) + "</td>");
            cell(out, i, "shared", Figures.count(c.shared()));
            cell(out, i, "left-out", Figures.count(c.leftOut()));
            cell(out, i, "difference", Figures.difference(d.difference()));
            cell(out, i, "ci-low", Figures.difference(d.ciLow()));
            cell(out, i, "ci-high", Figures.difference(d.ciHigh()));
            cell(out, i, "stderr", Figures.ratio(d.standardError()));
            cell(out, i, "p-value", PairedDifference.p(d.pValue()));
            cell(out, i, "changed", Figures.count(c.changed().size()));
            out.write("</tr>\n");
        }
        out.write("</tbody></table></div>\n<p class=\"note\">Difference: compared minus baseline, over the vignettes"
                + " both scored with the same prompt and expected answer (each side's mean over its epochs; a failed"
                + " answer counts 0). Left out: vignettes only one side scored, or asked differently.</p>\n");
        metrics(out, comparisons);
        for (int i = 0; i < comparisons.size(); i++) {
            changes(out, i, comparisons.get(i));
        }
        out.write("</section>\n");
    }

    /**
     * The per-metric table, when a pair has metrics ({@link MetricComparison}): per pair and
     * metric a row over every shared vignette ({@code data-group="all"}), one per group
     * ({@code data-group} its value) and the mean over the groups ({@code data-group="mean"}).
     * Figure cells carry {@code data-pair}, {@code data-score} (the metric), {@code data-group} and
     * {@code data-metric} (the column).
     */
    private static void metrics(Writer out, List<ModelComparison.Result> comparisons) throws IOException {
        if (comparisons.stream().allMatch(c -> c.metrics().isEmpty())) {
            return;
        }
        out.write("<h3>Per metric</h3>\n<div class=\"scroll\"><table class=\"compare-metrics\">\n<thead><tr>"
                + "<th>Baseline</th><th>Compared</th><th>Metric</th><th>Over</th><th>Shared vignettes</th>"
                + "<th>Difference</th><th>95% CI low</th><th>95% CI high</th><th>SE</th><th>p</th></tr></thead>\n"
                + "<tbody>\n");
        for (int i = 0; i < comparisons.size(); i++) {
            ModelComparison.Result c = comparisons.get(i);
            for (MetricComparison m : c.metrics()) {
                metricRow(out, i, c, m.metric(), "all", "all shared", m.difference());
                for (MetricComparison.Group g : m.groups()) {
                    metricRow(out, i, c, m.metric(), g.group(), m.groupBy() + "=" + g.group(), g.difference());
                }
                if (m.groupMean() != null) {
                    metricRow(out, i, c, m.metric(), "mean", "mean of the " + m.groups().size() + " " + m.groupBy()
                            + " groups, each counted once", m.groupMean());
                }
            }
        }
        out.write("</tbody></table></div>\n<p class=\"note\">Each metric over the vignettes both sides answered"
                + " with the same prompt and expected answer (multiple-choice metrics recomputed from the answers'"
                + " log-likelihoods; a failed answer counts 0); per group the same over that group's vignettes."
                + " The mean of the groups counts each once, as lm-eval's group aggregate without weight_by_size: "
                + Html.escape(PairedDifference.MEAN_METHOD) + ".</p>\n");
    }

    private static void metricRow(Writer out, int pair, ModelComparison.Result c, String metric, String group,
                                  String label, PairedDifference d) throws IOException {
        String data = " data-pair=\"" + pair + "\" data-score=\"" + Html.escape(metric) + "\" data-group=\""
                + Html.escape(group) + "\"";
        out.write("<tr" + data + "><td>" + Html.escape(c.baselineName()) + "</td><td>" + Html.escape(c.name())
                + "</td><td>" + Html.escape(metric) + "</td><td>" + Html.escape(label) + "</td>");
        metricCell(out, data, "shared", Figures.count(d.vignettes()));
        metricCell(out, data, "difference", Figures.difference(d.difference()));
        metricCell(out, data, "ci-low", Figures.difference(d.ciLow()));
        metricCell(out, data, "ci-high", Figures.difference(d.ciHigh()));
        metricCell(out, data, "stderr", Figures.ratio(d.standardError()));
        metricCell(out, data, "p-value", PairedDifference.p(d.pValue()));
        out.write("</tr>\n");
    }

    private static void metricCell(Writer out, String data, String column, String text) throws IOException {
        out.write("<td class=\"num\"" + data + " data-metric=\"" + column + "\">" + Html.escape(text) + "</td>");
    }

    private static void changes(Writer out, int pair, ModelComparison.Result c) throws IOException {
        List<ModelComparison.Changed> changed = c.changed();
        out.write("<details class=\"changed\" data-pair=\"" + pair + "\"><summary>" + Html.escape(c.name()) + " vs "
                + Html.escape(c.baselineName()) + ": " + changed.size() + (changed.size() == 1 ? " vignette" : " vignettes")
                + " changed</summary>\n");
        if (!changed.isEmpty()) {
            out.write("<table class=\"changed\"><thead><tr><th>Vignette</th><th>Baseline</th><th>Compared</th>"
                    + "<th>Difference</th></tr></thead>\n<tbody>\n");
            int listed = Math.min(changed.size(), MAX_LISTED_CHANGES);
            for (ModelComparison.Changed v : changed.subList(0, listed)) {
                out.write("<tr><td>" + Html.escape(v.vignetteId()) + "</td><td class=\"num\">"
                        + Figures.ratio(v.baseline()) + "</td><td class=\"num\">" + Figures.ratio(v.other())
                        + "</td><td class=\"num\">" + Figures.difference(v.difference()) + "</td></tr>\n");
            }
            out.write("</tbody></table>\n");
            if (listed < changed.size()) {
                out.write("<p class=\"note\">" + Figures.count(changed.size() - listed) + " more are in"
                        + " <code>compare --json</code>.</p>\n");
            }
        }
        out.write("</details>\n");
    }

    private static void cell(Writer out, int pair, String metric, String text) throws IOException {
        out.write("<td class=\"num\" data-pair=\"" + pair + "\" data-metric=\"" + metric + "\">" + Html.escape(text)
                + "</td>");
    }
}

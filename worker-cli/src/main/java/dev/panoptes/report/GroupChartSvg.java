package dev.panoptes.report;

import dev.panoptes.control.stats.Accuracy;
import dev.panoptes.control.stats.Estimate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The chart of a run's accuracy per group, as an inline SVG for {@link RunSectionHtml}: one
 * horizontal bar per group and model (the mean, 0 to 1) with a whisker for its 95 % interval,
 * the same {@link Estimate}s the group table prints (the interval is {@value Accuracy#METHOD}).
 * Drawn on the server, so it needs no script; every text is HTML-escaped.
 *
 * <p>Hooks for tools and tests: the {@code svg.group-chart[data-run]}; each bar is a
 * {@code rect.group-bar} with {@code data-group}, {@code data-model} and {@code data-mean}; each
 * interval a {@code g.group-ci} with {@code data-group}, {@code data-model}, {@code data-ci-low}
 * and {@code data-ci-high} (absent when the estimate has no interval). Stateless.
 */
final class GroupChartSvg {
    private static final int LABEL_WIDTH = 260;
    private static final int PLOT_WIDTH = 420;
    private static final int ROW_HEIGHT = 22;
    private static final int TOP = 8;
    private static final int AXIS_HEIGHT = 24;
    private static final String[] TICKS = {"0", "0.25", "0.5", "0.75", "1"};

    private GroupChartSvg() {
    }

    /**
     * The chart of {@code stats}' groups, or an empty string when the run is not grouped or no
     * group has a scored sample.
     */
    static String of(RunStats stats) {
        if (stats.groupBy() == null) {
            return "";
        }
        SortedSet<String> groups = new TreeSet<>();
        stats.models().forEach(m -> groups.addAll(m.byGroup().keySet()));
        boolean several = stats.models().size() > 1;
        List<String> rows = new ArrayList<>();
        for (String group : groups) {
            for (RunStats.ModelStats m : stats.models()) {
                Estimate e = m.byGroup().get(group);
                if (e != null) {
                    rows.add(row(rows.size(), group, m.model(), several, e));
                }
            }
        }
        if (rows.isEmpty()) {
            return "";
        }
        int height = TOP + rows.size() * ROW_HEIGHT + AXIS_HEIGHT;
        int width = LABEL_WIDTH + PLOT_WIDTH + 20;
        String key = Html.escape(stats.groupBy());
        StringBuilder svg = new StringBuilder();
        svg.append("<svg class=\"group-chart\" data-run=\"").append(Html.escape(stats.info().runId()))
                .append("\" width=\"").append(width).append("\" height=\"")
                .append(height).append("\" viewBox=\"0 0 ").append(width).append(' ').append(height)
                .append("\" role=\"img\" aria-label=\"Accuracy by ").append(key)
                .append(" with 95% intervals (").append(Html.escape(Accuracy.METHOD)).append(")\">\n");
        // The axis: gridlines at 0, 0.25, ..., 1 under the bars.
        int axisY = TOP + rows.size() * ROW_HEIGHT;
        for (int i = 0; i <= 4; i++) {
            double x = LABEL_WIDTH + PLOT_WIDTH * i / 4.0;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d8dee4\"/>"
                    + "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">%s</text>%n",
                    x, TOP, x, axisY, x, axisY + 15, TICKS[i]));
        }
        rows.forEach(svg::append);
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String row(int index, String group, String model, boolean several, Estimate e) {
        int y = TOP + index * ROW_HEIGHT;
        String label = several ? group + " \u00b7 " + model : group;
        String g = Html.escape(group);
        String m = Html.escape(model);
        StringBuilder row = new StringBuilder();
        row.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\""
                + " fill=\"#1d2329\">%s</text>", LABEL_WIDTH - 8, y + 15, Html.escape(label)));
        double mean = Double.isNaN(e.mean()) ? 0 : clamp(e.mean());
        row.append(String.format(Locale.ROOT, "<rect class=\"group-bar\" data-group=\"%s\" data-model=\"%s\""
                        + " data-mean=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"#6b9bd1\">"
                        + "<title>%s, %s: %s</title></rect>", g, m, Html.escape(Figures.ratio(e.mean())), LABEL_WIDTH,
                y + 4, PLOT_WIDTH * mean, g, m, Html.escape(e.format())));
        if (e.hasInterval()) {
            double lo = LABEL_WIDTH + PLOT_WIDTH * clamp(e.ciLow());
            double hi = LABEL_WIDTH + PLOT_WIDTH * clamp(e.ciHigh());
            int mid = y + 11;
            row.append(String.format(Locale.ROOT, "<g class=\"group-ci\" data-group=\"%s\" data-model=\"%s\""
                            + " data-ci-low=\"%s\" data-ci-high=\"%s\" stroke=\"#24292f\" stroke-width=\"2\">"
                            + "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                            + "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                            + "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/></g>", g, m,
                    Html.escape(Figures.ratio(e.ciLow())), Html.escape(Figures.ratio(e.ciHigh())),
                    lo, mid, hi, mid, lo, mid - 5, lo, mid + 5, hi, mid - 5, hi, mid + 5));
        }
        return row.append('\n').toString();
    }

    private static double clamp(double v) {
        return Double.isFinite(v) ? Math.max(0, Math.min(1, v)) : 0;
    }
}

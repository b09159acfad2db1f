package dev.panoptes.report;

import dev.panoptes.control.cost.Prices;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Writes a report on one or more runs as a single self-contained HTML5 file: the CSS and the
 * script are inline, the data is embedded as JSON, and nothing is fetched from anywhere, so the
 * file can be mailed, archived or opened offline.
 *
 * <p><b>What is where.</b> The number tables (accuracy with 95 % intervals, the comparison
 * between models, the group-by breakdown, workers, tokens and, given prices, cost, failures) are
 * rendered here, in Java and HTML-escaped, so the page reads without JavaScript. Every figure comes from
 * {@link RunStats} and is printed with {@link Figures}, like the other reports. The samples
 * table is built by the page's script from the JSON in
 * {@code <script type="application/json" id="panoptes-data">}, which keeps each sample's text
 * in the file once; the search box filters it (case-insensitive substring over all cells) and
 * so does a query in the address's fragment, {@code report.html#q=paris}. Rows that do not
 * match get the {@code hidden} attribute; {@code #sample-count} says "N of M samples".
 *
 * <p><b>Untrusted text.</b> Prompts and responses may hold anything, including
 * {@code </script>}. The server-rendered text is HTML-escaped, the JSON is made safe for a
 * script element by {@link ScriptDataWriter}, the script only ever assigns
 * {@code textContent}, and a Content-Security-Policy lets only the page's own script run (by
 * its hash) and allows no network access at all.
 *
 * <p><b>Size.</b> At most {@value #MAX_EMBEDDED_SAMPLES} samples are embedded; the page says how
 * many were left out and that {@code results} exports them all.
 *
 * <p>Stable hooks for tools and tests: each run is a {@code section.run[data-run]}; figure cells
 * carry {@code data-run}, {@code data-model} and {@code data-metric} ({@code accuracy},
 * {@code stderr}, {@code ci-low}, {@code ci-high}, {@code n}, {@code clusters}, {@code cost-usd}, ...), a
 * run's total cost is {@code [data-metric=cost-total]}; sample
 * rows have class {@code sample}. Stateless and thread-safe.
 */
public final class HtmlReport {
    /** The most samples one page embeds; beyond that a browser gets slow to open it. */
    public static final int MAX_EMBEDDED_SAMPLES = 20_000;

    private static final String CSS = resource("report.css");
    private static final String SCRIPT = resource("report.js");
    /** Only this exact script may run: an injected one, should escaping ever fail, is blocked. */
    private static final String CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; "
            + "script-src '" + sha256(SCRIPT) + "'; base-uri 'none'; form-action 'none'";

    private HtmlReport() {
    }

    /**
     * Writes the report to a file, replacing it.
     *
     * @param runs    the runs, in the order the page shows them
     * @param out     the file to write
     * @param groupBy a metadata key to break accuracy down by; null for the key each run was made
     *                with ({@code --group-by} of its command), if any
     * @throws IOException when the file cannot be written
     */
    public static void write(List<RunData> runs, Path out, String groupBy) throws IOException {
        write(runs, List.of(), out, groupBy);
    }

    /**
     * Writes the report to a file, replacing it, with each run's cost per model and in all at
     * {@code prices} ({@link RunCosts}, the figures the coordinator's summary prints).
     *
     * @param runs    the runs, in the order the page shows them
     * @param out     the file to write
     * @param groupBy a metadata key to break accuracy down by; null for none
     * @param prices  the models' prices; {@link Prices#NONE} shows no cost
     * @throws IOException when the file cannot be written
     */
    public static void write(List<RunData> runs, Path out, String groupBy, Prices prices) throws IOException {
        Objects.requireNonNull(out, "out");
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            write(runs, List.of(), writer, groupBy, MAX_EMBEDDED_SAMPLES, prices);
        }
    }

    /**
     * Writes the report with a comparison section first ({@code compare --out}), replacing the file.
     *
     * @param runs        the runs, in the order the page shows them
     * @param comparisons the model pairs compared, in order; empty for no comparison section
     * @param out         the file to write
     * @param groupBy     a metadata key to break accuracy down by; null for none
     * @throws IOException when the file cannot be written
     */
    public static void write(List<RunData> runs, List<ModelComparison.Result> comparisons, Path out, String groupBy)
            throws IOException {
        Objects.requireNonNull(out, "out");
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            write(runs, comparisons, writer, groupBy, MAX_EMBEDDED_SAMPLES, Prices.NONE);
        }
    }

    /**
     * Writes the report to a writer, which must encode UTF-8 (the page declares it). Does not
     * close the writer.
     *
     * @param runs    the runs, in the order the page shows them
     * @param out     where the HTML goes
     * @param groupBy a metadata key to break accuracy down by; null for none
     * @throws IOException when writing fails
     */
    public static void write(List<RunData> runs, Writer out, String groupBy) throws IOException {
        write(runs, out, groupBy, MAX_EMBEDDED_SAMPLES);
    }

    /**
     * As {@link #write(List, Writer, String)}, with each run's cost at {@code prices}
     * ({@link Prices#NONE}: none shown).
     */
    public static void write(List<RunData> runs, Writer out, String groupBy, Prices prices) throws IOException {
        write(runs, List.of(), out, groupBy, MAX_EMBEDDED_SAMPLES, prices);
    }

    /** As {@link #write(List, Writer, String)}, embedding at most {@code maxSamples} samples (tests use a small cap). */
    static void write(List<RunData> runs, Writer out, String groupBy, int maxSamples) throws IOException {
        write(runs, List.of(), out, groupBy, maxSamples, Prices.NONE);
    }

    private static void write(List<RunData> runs, List<ModelComparison.Result> comparisons, Writer out, String groupBy,
                              int maxSamples, Prices prices) throws IOException {
        Objects.requireNonNull(prices, "prices");
        Objects.requireNonNull(runs, "runs");
        Objects.requireNonNull(comparisons, "comparisons");
        Objects.requireNonNull(out, "out");
        List<RunStats> stats = new ArrayList<>(runs.size());
        for (RunData run : runs) {
            stats.add(RunStats.of(run, RunStats.groupByOf(run, groupBy)));
        }
        // The samples' group filter follows the first run's key, as the page's data does.
        String sampleKey = stats.isEmpty() ? groupBy : stats.get(0).groupBy();
        writeHead(out, runs);
        out.write("<main>\n<h1>Panoptes report</h1>\n");
        if (runs.isEmpty()) {
            out.write("<p class=\"muted\">No runs.</p>\n");
        }
        if (!comparisons.isEmpty()) {
            ComparisonHtml.write(out, comparisons);
        }
        for (int i = 0; i < runs.size(); i++) {
            RunSectionHtml.write(out, stats.get(i), RunCosts.of(stats.get(i), prices),
                    NotStored.of(stats.get(i).info(), prices), runs.get(i).failures(),
                    runs.get(i).samples().stream().filter(SampleRow::failed).toList());
        }
        writeSamples(out, runs, stats, sampleKey, maxSamples);
        out.write("</main>\n<script type=\"application/json\" id=\"panoptes-data\">");
        ScriptDataWriter json = new ScriptDataWriter(out);
        ReportJson.write(runs, stats, comparisons, maxSamples, json);
        json.flush();
        out.write("</script>\n<script>");
        out.write(SCRIPT);
        out.write("</script>\n</body>\n</html>\n");
        out.flush();
    }

    private static void writeHead(Writer out, List<RunData> runs) throws IOException {
        String title = runs.size() == 1 ? "Panoptes report: " + runs.get(0).info().runId()
                : "Panoptes report: " + runs.size() + " runs";
        out.write("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.write("<meta http-equiv=\"Content-Security-Policy\" content=\"" + CONTENT_SECURITY_POLICY + "\">\n");
        out.write("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        out.write("<meta name=\"generator\" content=\"panoptes\">\n");
        out.write("<title>" + Html.escape(title) + "</title>\n<style>\n" + CSS + "</style>\n</head>\n<body>\n");
    }

    private static void writeSamples(Writer out, List<RunData> runs, List<RunStats> stats, String groupBy,
                                     int maxSamples) throws IOException {
        int total = runs.stream().mapToInt(r -> r.samples().size()).sum();
        int embedded = Math.min(total, maxSamples);
        out.write("<section id=\"samples\">\n<h2>Samples</h2>\n");
        out.write("<div class=\"search\"><input type=\"search\" id=\"sample-search\" "
                + "placeholder=\"Filter samples (any column)\" aria-label=\"Filter samples\" autocomplete=\"off\">"
                + "<label><input type=\"checkbox\" id=\"sample-wrong\"> wrong only</label>"
                + "<label>model <select id=\"sample-model\"><option value=\"\">all</option>");
        SortedSet<String> models = new TreeSet<>();
        SortedSet<String> groups = new TreeSet<>();
        for (RunStats s : stats) {
            s.models().forEach(m -> models.add(m.model()));
            s.models().forEach(m -> groups.addAll(m.byGroup().keySet()));
        }
        for (String model : models) {
            out.write("<option value=\"" + Html.escape(model) + "\">" + Html.escape(model) + "</option>");
        }
        out.write("</select></label>");
        String key = groupBy == null || groupBy.isBlank() ? null : groupBy;
        if (key != null) {
            out.write("<label>" + Html.escape(key) + " <select id=\"sample-group\"><option value=\"\">all</option>");
            for (String group : groups) {
                out.write("<option value=\"" + Html.escape(group) + "\">" + Html.escape(group) + "</option>");
            }
            out.write("</select></label>");
        }
        out.write("<span id=\"sample-count\">" + embedded + " of " + embedded + " samples</span></div>\n");
        out.write("<p class=\"note\">Type to filter, or open this file as <code>report.html#q=word</code>;"
                + " click a column's header to sort by it (again to reverse). Wrong: a score below 1, failed"
                + " answers included (they count 0). Scores are blank for unscored samples. The run column shows"
                + " the first 8 characters of the run id; hover for all of it.</p>\n");
        if (embedded < total) {
            out.write("<p class=\"note\" id=\"samples-capped\">This page shows the first " + Figures.count(embedded)
                    + " of " + Figures.count(total) + " samples; " + Figures.count(total - embedded)
                    + " were left out to keep it fast. <code>worker.jar results --db FILE</code>"
                    + " exports them all.</p>\n");
        }
        out.write("<noscript><p class=\"note\">The samples table needs JavaScript; the figures above do not."
                + "</p></noscript>\n");
        out.write("<div class=\"scroll\"><table class=\"samples\">\n<thead><tr>");
        for (int i = 0; i < ReportJson.SAMPLE_COLUMNS.size(); i++) {
            // data-name: the stylesheet sizes the columns by name (see report.css).
            String name = Html.escape(ReportJson.SAMPLE_COLUMNS.get(i));
            out.write("<th class=\"sortable\" data-column=\"" + i + "\" data-name=\"" + name
                    + "\" aria-sort=\"none\" title=\"Sort\">" + name + "</th>");
        }
        out.write("</tr></thead>\n<tbody id=\"sample-rows\"></tbody>\n</table></div>\n</section>\n");
    }

    private static String resource(String name) {
        try (InputStream in = HtmlReport.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("resource " + name + " is missing next to "
                        + HtmlReport.class.getName() + "; was worker.jar built without its resources?");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read resource " + name, e);
        }
    }

    /** The CSP source expression for an inline script: 'sha256-' and the base64 of its digest. */
    private static String sha256(String script) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(script.getBytes(StandardCharsets.UTF_8));
            return "sha256-" + Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}

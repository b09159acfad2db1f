package dev.panoptes.report;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a report back: either the file {@link HtmlReport} wrote or the DOM Chromium dumped
 * after the page's script ran. Both serialize attributes in source order with double quotes,
 * which is all these regular expressions rely on.
 */
public final class ReportPage {
    private static final Pattern SAMPLE_ROW = Pattern.compile("<tr class=\"sample\"( hidden=\"\")?>(.*?)</tr>",
            Pattern.DOTALL);
    private static final Pattern TAG = Pattern.compile("<[^>]*>");
    private static final String DATA_OPEN = "<script type=\"application/json\" id=\"panoptes-data\">";

    private final String html;

    public ReportPage(String html) {
        this.html = html;
    }

    /**
     * The text of the figure cell for a run, model and metric in a table with this class (a page
     * of several runs has one such table per run).
     */
    public String figure(String tableClass, String run, String model, String metric) {
        Pattern cell = Pattern.compile("<td[^>]*data-run=\"" + Pattern.quote(run) + "\" data-model=\""
                + Pattern.quote(model) + "\" data-metric=\"" + Pattern.quote(metric) + "\"[^>]*>([^<]*)</td>");
        table(tableClass);
        for (int start = html.indexOf("<table class=\"" + tableClass + "\""); start >= 0;
             start = html.indexOf("<table class=\"" + tableClass + "\"", start + 1)) {
            Matcher m = cell.matcher(html.substring(start, html.indexOf("</table>", start)));
            if (m.find()) {
                return m.group(1);
            }
        }
        throw new AssertionError("no " + metric + " cell for run=" + run + " model=" + model + " in any table."
                + tableClass);
    }

    /** The first table with this class, from its start tag to its end tag. */
    public String table(String tableClass) {
        int start = html.indexOf("<table class=\"" + tableClass + "\"");
        if (start < 0) {
            throw new AssertionError("no table." + tableClass + " in the page");
        }
        return html.substring(start, html.indexOf("</table>", start));
    }

    /** The rows of the samples table. */
    List<Row> sampleRows() {
        List<Row> rows = new ArrayList<>();
        Matcher m = SAMPLE_ROW.matcher(html);
        while (m.find()) {
            rows.add(new Row(m.group(1) != null, m.group(2)));
        }
        return rows;
    }

    /** The text of the element with this id. */
    String textOf(String id) {
        Matcher m = Pattern.compile("id=\"" + Pattern.quote(id) + "\"[^>]*>([^<]*)<").matcher(html);
        if (!m.find()) {
            throw new AssertionError("no element #" + id + " in the page");
        }
        return m.group(1);
    }

    /** The document's title, as serialized. */
    String title() {
        Matcher m = Pattern.compile("<title>([^<]*)</title>").matcher(html);
        return m.find() ? m.group(1) : null;
    }

    /** The raw content of the embedded data block, up to the first end tag the HTML parser would see. */
    public String dataBlock() {
        int start = html.indexOf(DATA_OPEN);
        if (start < 0) {
            throw new AssertionError("no panoptes-data script in the page");
        }
        start += DATA_OPEN.length();
        return html.substring(start, html.toLowerCase(java.util.Locale.ROOT).indexOf("</script", start));
    }

    /** The page without the embedded data block: what the server rendered and the script. */
    String withoutDataBlock() {
        String data = dataBlock();
        int start = html.indexOf(data);
        return html.substring(0, start) + html.substring(start + data.length());
    }

    /** Occurrences of a substring. */
    static int count(String text, String needle) {
        int count = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length())) {
            count++;
        }
        return count;
    }

    /**
     * A row of the samples table.
     *
     * @param hidden whether the filter hid it
     * @param html   its inner HTML
     */
    record Row(boolean hidden, String html) {
        /** Its cells' text with tags removed and entities left as they are. */
        String text() {
            return TAG.matcher(html).replaceAll(" ");
        }
    }
}

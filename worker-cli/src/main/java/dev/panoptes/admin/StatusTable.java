package dev.panoptes.admin;

import dev.panoptes.control.Plural;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The status view as a person reads it: two lines about the run, then one aligned row per
 * worker. Pure formatting; {@code worker.jar status} prints it.
 */
public final class StatusTable {
    private static final List<String> HEADER = List.of("WORKER", "ADDRESS", "CAPACITY", "IN FLIGHT", "QUEUED",
            "COMPLETED", "FAILURES", "QUARANTINE", "HEARTBEAT", "MODELS");

    private StatusTable() {
    }

    /** The run line, its progress line, a blank line and the workers' table (or a note that there are none). */
    public static String render(StatusView view) {
        StatusView.Run r = view.run();
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "run %s  suite %s  models %s  scorer %s  epochs %d%n", r.id(), r.suite(),
                r.models().isEmpty() ? "-" : String.join(", ", r.models()), r.scorer(), r.epochs()));
        b.append(String.format(Locale.ROOT, "%s (%s): %d/%d %s done, %d failed, %d in flight; %s stored;"
                        + " elapsed %s, ETA %s%n", r.state(), r.phase(), r.jobsDone(), r.jobsTotal(),
                Plural.noun(r.jobsTotal(), "job"), r.jobsFailed(), r.jobsInFlight(),
                Plural.of(r.answersStored(), "answer"), seconds(r.elapsedSeconds()),
                r.etaSeconds() == null ? "unknown" : seconds(r.etaSeconds())));
        b.append(String.format("%n"));
        if (view.workers().isEmpty()) {
            b.append(String.format("no worker connected%n"));
            return b.toString();
        }
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADER);
        for (StatusView.Worker w : view.workers()) {
            String quarantine = w.quarantine() + (w.quarantinedUntil() == null ? "" : " until " + w.quarantinedUntil());
            rows.add(List.of(w.id() + (w.draining() ? " (draining)" : ""), w.address(), Integer.toString(w.capacity()),
                    Integer.toString(w.inFlight()), Integer.toString(w.queued()), Long.toString(w.completed()),
                    Long.toString(w.failures()), quarantine,
                    w.heartbeatAgeSeconds() == null ? "?" : seconds(w.heartbeatAgeSeconds()),
                    w.models().isEmpty() ? "(any)" : String.join(",", w.models())));
        }
        int[] widths = new int[HEADER.size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                line.append(row.get(i));
                if (i < row.size() - 1) {
                    line.append(" ".repeat(widths[i] - row.get(i).length() + 2));
                }
            }
            b.append(line.toString().stripTrailing()).append(String.format("%n"));
        }
        return b.toString();
    }

    /** 0.4s, 12s, 3m05s, 2h03m. */
    static String seconds(double s) {
        if (s < 10) {
            return String.format(Locale.ROOT, "%.1fs", s);
        }
        long whole = Math.round(s);
        if (whole < 60) {
            return whole + "s";
        }
        if (whole < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", whole / 60, whole % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", whole / 3600, whole % 3600 / 60);
    }
}

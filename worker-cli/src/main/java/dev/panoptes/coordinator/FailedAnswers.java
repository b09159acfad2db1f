package dev.panoptes.coordinator;

import dev.panoptes.report.RunData;
import dev.panoptes.report.SampleRow;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The failed answers of a run, per model: vignettes whose request the model API refused for what
 * they hold (docs/OPERATIONS.md, "Failed answers"), or whose sandbox setup failed (their files or
 * setup commands, which fail so on any worker), stored as records with an error instead of
 * failing their jobs. What the summary counts, and what {@code --max-error-rate} weighs against
 * the answers stored.
 *
 * <p>Immutable.
 *
 * @param models one entry per model with a stored record, in the order of first storing
 */
public record FailedAnswers(List<PerModel> models) {
    /** No stored record at all. */
    public static final FailedAnswers NONE = new FailedAnswers(List.of());
    /** The most of a reason the console shows. */
    private static final int REASON_CHARS = 400;

    /**
     * One model's failed answers.
     *
     * @param model       the model the run asked for
     * @param failed      its failed answers
     * @param stored      its stored records, failed answers included
     * @param firstVignette the vignette of its first failed answer; null when none
     * @param firstReason the error of its first failed answer; null when none
     */
    public record PerModel(String model, long failed, long stored, String firstVignette, String firstReason) {
    }

    /** @param models copied */
    public FailedAnswers {
        models = List.copyOf(models);
    }

    /**
     * Counts the failed answers among a run's rows, as read for its summary (storage order, so
     * that "first" is the first stored). Any thread.
     */
    public static FailedAnswers of(RunData run) {
        Counter counter = new Counter();
        run.samples().forEach(counter);
        return counter.result();
    }

    /**
     * Counts failed answers one row at a time, in storage order (so that "first" is the first
     * stored), as a run's rows stream from the store: per model two counts and its first failed
     * answer's vignette and reason, not the rows. Not thread-safe.
     */
    public static final class Counter implements Consumer<SampleRow> {
        private final Map<String, long[]> counts = new LinkedHashMap<>();
        private final Map<String, String[]> first = new LinkedHashMap<>();

        @Override
        public void accept(SampleRow row) {
            long[] c = counts.computeIfAbsent(row.model(), m -> new long[2]);
            c[1]++;
            if (row.failed()) {
                c[0]++;
                first.putIfAbsent(row.model(), new String[]{row.vignetteId(), row.error()});
            }
        }

        /** The failed answers counted so far. */
        public FailedAnswers result() {
            List<PerModel> models = new ArrayList<>();
            counts.forEach((model, c) -> {
                String[] f = first.get(model);
                models.add(new PerModel(model, c[0], c[1], f == null ? null : f[0], f == null ? null : f[1]));
            });
            return new FailedAnswers(models);
        }
    }

    /** Failed answers of every model. */
    public long failed() {
        return models.stream().mapToLong(PerModel::failed).sum();
    }

    /** Stored records of every model, failed answers included. */
    public long stored() {
        return models.stream().mapToLong(PerModel::stored).sum();
    }

    /**
     * True when the share of failed answers among the answers stored is above {@code maxRate}
     * (0 to 1): with 0, any failed answer is too many.
     */
    public boolean exceed(double maxRate) {
        long failed = failed();
        return failed > 0 && failed > maxRate * stored();
    }

    /**
     * One line per model, "  failed answers: 1 of 16 for m (first: v3: HTTP 400: ...)", when any
     * model has a failed answer; nothing otherwise.
     */
    public String render() {
        if (failed() == 0) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (PerModel m : models) {
            sb.append(String.format(Locale.ROOT, "  failed answers: %d of %d for %s", m.failed(), m.stored(), m.model()));
            if (m.firstReason() != null) {
                sb.append(" (").append(m.failed() == 1 ? "" : "first: ").append(m.firstVignette()).append(": ")
                        .append(excerpt(m.firstReason())).append(')');
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static String excerpt(String reason) {
        String oneLine = reason.replaceAll("\\s+", " ").trim();
        return oneLine.length() <= REASON_CHARS ? oneLine : oneLine.substring(0, REASON_CHARS - 3) + "...";
    }
}

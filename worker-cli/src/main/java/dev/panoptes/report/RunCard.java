package dev.panoptes.report;

import dev.panoptes.control.store.RunSitting;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.SuiteSubset;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The record of a run, as every report shows it: one entry per parameter that decided its
 * answers, its times and versions, and the scoring the figures come from. The HTML report's
 * run card and the JSON exports are both rendered from this list, so a parameter added to the
 * run's manifest is added here once and appears everywhere.
 *
 * <p>What a run did not record (a legacy run, noted before manifests were kept: temperature,
 * max tokens, seed, system prompt, few-shot file, suite hash, tool version, job size, label; or
 * an end time of a run that did not finish) is an entry with a null value, shown as
 * {@value #NOT_RECORDED}, so a reader sees what is unknown rather than a missing row. A parameter
 * the run left to the API's default says so. Stateless and thread-safe.
 */
public final class RunCard {
    /** How an entry whose value the run did not record is shown. */
    public static final String NOT_RECORDED = "not recorded";

    private RunCard() {
    }

    /**
     * One parameter of the card.
     *
     * @param key   a stable camelCase key, for JSON and tests ({@code temperature}, {@code suiteHash}, ...)
     * @param label what people read
     * @param value its value as text; null when the run did not record it
     */
    public record Entry(String key, String label, String value) {
        /** The value, or {@value RunCard#NOT_RECORDED}. */
        public String shown() {
            return value == null ? NOT_RECORDED : value;
        }
    }

    /**
     * The card of a run.
     *
     * @param info the run's header as the store holds it
     * @return the entries, in the order the report shows them
     */
    public static List<Entry> of(RunInfo info) {
        RunManifest m = info.manifest();
        boolean known = m != null;
        List<Entry> card = new ArrayList<>();
        card.add(new Entry("runId", "Run", info.runId()));
        card.add(new Entry("label", "Label", known ? (m.label().isEmpty() ? "none" : m.label()) : null));
        card.add(new Entry("suite", "Suite", info.suite()));
        card.add(new Entry("suiteHash", "Suite hash (SHA-256)", known ? m.suiteSha256() : null));
        card.add(new Entry("vignettes", "Vignettes", Integer.toString(info.vignettes())));
        card.add(new Entry("subset", "Subset", known ? subsetOrWhole(m) : null));
        card.add(new Entry("models", "Models", String.join(", ", info.models())));
        card.add(new Entry("epochs", "Epochs", Integer.toString(info.epochs())));
        card.add(new Entry("jobSize", "Job size", known ? Integer.toString(m.jobSize()) : null));
        // A parameter the run left to the model API's default is recorded as such, not as unknown.
        card.add(new Entry("temperature", "Temperature", known ? orDefault(m.temperature()) : null));
        card.add(new Entry("maxTokens", "Max tokens", known ? orDefault(m.maxTokens()) : null));
        card.add(new Entry("seed", "Seed", known ? orDefault(m.seed()) : null));
        card.add(new Entry("systemPrompt", "System prompt", known ? (m.systemPrompt() == null ? "none"
                : m.systemPrompt()) : null));
        card.add(new Entry("fewShot", "Few-shot file", known ? (m.fewShot() == null ? "none"
                : m.fewShot() + " (SHA-256 " + m.fewShotSha256() + ")") : null));
        card.add(new Entry("scorer", "Scorer", info.scorer() == null ? "none" : info.scorer()));
        card.add(new Entry("scoring", "Scoring shown", scoring(info)));
        card.add(new Entry("groupBy", "Grouped by", known ? (m.groupBy() == null ? "none"
                : m.groupBy() + " (--group-by)") : null));
        card.add(new Entry("toolVersion", "Tool version", known ? m.toolVersion() : null));
        card.add(new Entry("startedAt", "Started", info.startedAt() == null ? null : info.startedAt().toString()));
        card.add(new Entry("finishedAt", "Finished", info.finishedAt() == null ? null : info.finishedAt().toString()));
        card.add(new Entry("duration", "Duration", duration(info)));
        if (!info.sittings().isEmpty()) {
            // Runs noted before sittings were kept have none: no entry rather than an unknown one.
            card.add(new Entry("sittings", "Sittings", sittings(info.sittings())));
        }
        return card;
    }

    /**
     * The time coordinators spent on the run (the sum of its sittings) beside the wall span from
     * its first start to its end: "6.2 s over 2 sittings (wall span 1 min 07 s)".
     */
    private static String duration(RunInfo info) {
        Duration worked = info.workedFor();
        if (worked == null) {
            return null;
        }
        Duration span = info.wallSpan();
        int n = info.sittings().size();
        if (n <= 1) {
            return duration(worked);
        }
        return duration(worked) + " over " + n + " sittings (wall span " + (span == null ? NOT_RECORDED
                : duration(span)) + ")";
    }

    /** "1: START to END, 20 answers; 2: ...", each sitting's end marked when it was not noted. */
    private static String sittings(List<RunSitting> sittings) {
        if (sittings.isEmpty()) {
            return null;
        }
        List<String> each = new ArrayList<>();
        for (RunSitting s : sittings) {
            each.add(s.number() + ": " + s.startedAt().truncatedTo(ChronoUnit.MILLIS) + " to "
                    + s.endedAt().truncatedTo(ChronoUnit.MILLIS)
                    + (s.ended() ? "" : " (its last answer; the end was not noted)") + ", " + duration(s.duration())
                    + ", " + s.answers() + (s.answers() == 1 ? " answer" : " answers") + " stored");
        }
        return String.join("; ", each);
    }

    /**
     * The subset of its suite a run asks, for people, with the options that ask it again
     * ({@code "shuffled (seed 7), first 5 (--shuffle 7 --limit 5)"}); null for the whole suite or
     * a run without a manifest.
     */
    public static String subset(RunManifest manifest) {
        SuiteSubset s = manifest == null ? null : manifest.subset();
        if (s == null || s.isAll()) {
            return null;
        }
        List<String> options = new ArrayList<>();
        if (!s.sampleIds().isEmpty()) {
            options.add("--sample-id " + String.join(",", s.sampleIds()));
        }
        if (s.shuffleSeed() != null) {
            options.add("--shuffle " + s.shuffleSeed());
        }
        if (s.limit() != null) {
            options.add("--limit " + s.limit());
        }
        return s.describe() + " (" + String.join(" ", options) + ")";
    }

    private static String subsetOrWhole(RunManifest m) {
        String subset = subset(m);
        return subset == null ? "the whole suite, in file order" : subset;
    }

    private static String orDefault(Object value) {
        return value == null ? "the model API's default" : value.toString();
    }

    /** "1 h 02 min 05 s", "3 min 07 s", "12.3 s". */
    static String duration(Duration d) {
        long ms = Math.max(0, d.toMillis());
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
        }
        long s = ms / 1000;
        return s >= 3600 ? String.format(Locale.ROOT, "%d h %02d min %02d s", s / 3600, s % 3600 / 60, s % 60)
                : String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
    }

    /** Which scores the figures are: the scoring shown, of how many the run has. */
    private static String scoring(RunInfo info) {
        Scoring shown = info.scoring();
        if (shown == null) {
            return info.scorer() == null ? "none (unscored)" : "the stored scores, by " + info.scorer();
        }
        return "scoring " + shown.number() + " of " + info.scorings().size() + " (" + shown.scorer() + ", made by "
                + shown.origin() + " at " + shown.createdAt() + ")";
    }
}

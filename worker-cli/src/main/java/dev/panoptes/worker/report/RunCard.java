package dev.panoptes.worker.report;

import java.util.ArrayList;
import java.util.List;

/**
 * The record of a run, as every report shows it: one entry per parameter that decided its
 * answers, its times and versions, and the scoring the figures come from. The HTML report's
 * run card and the JSON exports are both rendered from this list, so a parameter added to the
 * run's manifest is added here once and appears everywhere.
 *
 * <p>What the store does not record yet (before run manifests: temperature, max tokens, seed,
 * system prompt, few-shot file, suite hash, tool version, job size, label, end time) is an entry
 * with a null value, shown as {@value #NOT_RECORDED}, so a reader sees what is unknown rather
 * than a missing row. Stateless and thread-safe.
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
        List<Entry> card = new ArrayList<>();
        card.add(new Entry("runId", "Run", info.runId()));
        card.add(new Entry("label", "Label", null));
        card.add(new Entry("suite", "Suite", info.suite()));
        card.add(new Entry("suiteHash", "Suite hash (SHA-256)", null));
        card.add(new Entry("vignettes", "Vignettes", Integer.toString(info.vignettes())));
        card.add(new Entry("models", "Models", String.join(", ", info.models())));
        card.add(new Entry("epochs", "Epochs", Integer.toString(info.epochs())));
        card.add(new Entry("jobSize", "Job size", null));
        card.add(new Entry("temperature", "Temperature", null));
        card.add(new Entry("maxTokens", "Max tokens", null));
        card.add(new Entry("seed", "Seed", null));
        card.add(new Entry("systemPrompt", "System prompt", null));
        card.add(new Entry("fewShot", "Few-shot file", null));
        card.add(new Entry("scorer", "Scorer", info.scorer() == null ? "none" : info.scorer()));
        card.add(new Entry("scoring", "Scoring shown", scoring(info)));
        card.add(new Entry("toolVersion", "Tool version", null));
        card.add(new Entry("startedAt", "Started", info.startedAt() == null ? null : info.startedAt().toString()));
        card.add(new Entry("finishedAt", "Finished", null));
        card.add(new Entry("duration", "Duration", null));
        return card;
    }

    /** Which scores the figures are: before versioned scorings, the one set the store holds. */
    private static String scoring(RunInfo info) {
        return info.scorer() == null ? "none (unscored)" : "the stored scores, by " + info.scorer();
    }
}

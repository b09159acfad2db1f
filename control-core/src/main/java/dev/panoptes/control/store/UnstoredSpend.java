package dev.panoptes.control.store;

import dev.panoptes.control.Usage;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one model's calls spent in one sitting of a run (or over all of them) on answers that were
 * never stored: late answers to an attempt that had timed out or was cancelled, answers too large
 * to send, results that did not answer their job, the calls of a job that failed after them. Those
 * tokens were paid for, but no stored record shows them; {@link JdbcResultStore#endSitting(String,
 * List)} keeps them with the sitting, so that {@code runs show}, the report and a resumed run's cost
 * budget count them.
 *
 * <p>Immutable; any thread.
 *
 * @param model            the model the calls asked
 * @param attempts         the attempts whose answered calls were not stored
 * @param promptTokens     the prompt tokens those calls spent
 * @param completionTokens the completion tokens those calls spent
 */
public record UnstoredSpend(String model, long attempts, long promptTokens, long completionTokens) {
    /**
     * @throws NullPointerException     when the model is null
     * @throws IllegalArgumentException when a count is negative
     */
    public UnstoredSpend {
        Objects.requireNonNull(model, "model");
        if (attempts < 0 || promptTokens < 0 || completionTokens < 0) {
            throw new IllegalArgumentException("unstored spend of model " + model + " has a negative count: "
                    + attempts + " attempts, " + promptTokens + " prompt and " + completionTokens
                    + " completion tokens");
        }
    }

    /** The tokens, as a {@link Usage}. */
    public Usage tokens() {
        return new Usage(promptTokens, completionTokens);
    }

    /** True when nothing was spent: no attempt and no token. */
    public boolean isZero() {
        return attempts == 0 && promptTokens == 0 && completionTokens == 0;
    }

    /**
     * The spends added up per model, in the order each model is first met (with a model met twice
     * in the same entry); empty for none.
     */
    public static List<UnstoredSpend> sum(Collection<UnstoredSpend> spends) {
        Map<String, UnstoredSpend> byModel = new LinkedHashMap<>();
        for (UnstoredSpend s : spends) {
            byModel.merge(s.model(), s, (a, b) -> new UnstoredSpend(a.model(), a.attempts() + b.attempts(),
                    a.promptTokens() + b.promptTokens(), a.completionTokens() + b.completionTokens()));
        }
        return new ArrayList<>(byModel.values());
    }
}

package dev.panoptes.report;

import dev.panoptes.control.Plural;
import dev.panoptes.control.Usage;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.RunSitting;
import dev.panoptes.control.store.UnstoredSpend;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What a run's model calls spent, over all its sittings, on answers that were never stored (late
 * answers after a timeout or a cancellation, answers too large to send, results that answered no
 * job of theirs, the calls of a job that failed after them): tokens paid for that no stored record
 * shows, so that the run's tokens and cost, which are the stored answers', leave them out. As the
 * store keeps them with each sitting ({@link RunSitting#unstored()}); {@code runs show} prints
 * {@link #line()}, the HTML report {@link #sentence()}, and its data block the per-model figures.
 *
 * <p>Immutable; any thread.
 *
 * @param models   per model, added up over the sittings
 * @param sittings how many of the run's sittings spent any
 * @param usd      what they cost at the prices given, over the priced models; null when none is
 *                 priced (or no prices were given)
 */
public record NotStored(List<UnstoredSpend> models, int sittings, Double usd) {
    /** Nothing spent. */
    public static final NotStored NONE = new NotStored(List.of(), 0, null);

    /** Copies the list. */
    public NotStored {
        models = List.copyOf(Objects.requireNonNull(models, "models"));
    }

    /** What the run's sittings spent on answers never stored, priced at {@code prices}. */
    public static NotStored of(RunInfo info, Prices prices) {
        List<UnstoredSpend> models = info.notStored();
        int sittings = (int) info.sittings().stream().filter(s -> !s.unstored().isEmpty()).count();
        return models.isEmpty() ? NONE : new NotStored(models, sittings, RunCosts.unstoredUsd(models, prices));
    }

    /** True when nothing was spent on answers never stored. */
    public boolean isZero() {
        return models.stream().allMatch(UnstoredSpend::isZero);
    }

    /** The attempts whose calls' answers were not stored, all models together. */
    public long attempts() {
        return models.stream().mapToLong(UnstoredSpend::attempts).sum();
    }

    /** Their tokens, all models together. */
    public Usage tokens() {
        Usage all = Usage.ZERO;
        for (UnstoredSpend m : models) {
            all = all.plus(m.tokens());
        }
        return all;
    }

    /**
     * {@code runs show}'s line, "" when nothing was spent: "  not stored:  660 tokens (600 prompt +
     * 60 completion), 0.6600 USD, spent by the calls of 2 attempts over 2 sittings whose answers were
     * never stored; the tokens above leave them out".
     */
    public String line() {
        if (isZero()) {
            return "";
        }
        return String.format(Locale.ROOT, "  not stored:  %s spent by the calls of %s whose answers were never stored;"
                + " the tokens above leave them out%n", figures(), attemptsText());
    }

    /** The HTML report's sentence (plain text, to be escaped), "" when nothing was spent. */
    public String sentence() {
        if (isZero()) {
            return "";
        }
        return "Not stored: " + figures() + " spent by the calls of " + attemptsText() + " whose answers were never"
                + " stored (late after a timeout or a cancellation, too large to send, or of a job that failed after"
                + " them): paid for, but the tokens and cost above, which are the stored answers', leave them out.";
    }

    /** "660 tokens (600 prompt + 60 completion)", with ", 0.6600 USD," when priced. */
    private String figures() {
        Usage t = tokens();
        return String.format(Locale.ROOT, "%d tokens (%d prompt + %d completion)%s", t.totalTokens(),
                t.promptTokens(), t.completionTokens(), usd == null ? "" : ", " + Figures.usd(usd) + " USD,");
    }

    /** "2 attempts", with " over 2 sittings" when more than one spent any. */
    private String attemptsText() {
        return Plural.of(attempts(), "attempt") + (sittings > 1 ? " over " + sittings + " sittings" : "");
    }
}

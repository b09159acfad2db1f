package dev.panoptes.report;

import dev.panoptes.control.Usage;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.UnstoredSpend;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a run's stored answers cost, per model and in all, at the prices given (recomputed from
 * the token counts of the stored records, as {@link RunStats} adds them up, so resumed runs are
 * costed whole). A model without a price has no cost, and the total then covers only the priced
 * ones (and says so). The one place that turns tokens into USD for the coordinator's summary, its
 * JSON, the HTML report and the {@code results} export ({@link #answerUsd}), so they agree. Immutable.
 *
 * @param models  one entry per model of the run, in its order
 * @param pricing whether any price was given at all; without one, nothing is printed
 */
public record RunCosts(List<ModelCost> models, boolean pricing) {
    private static final String NO_PRICE = "no price";

    /**
     * One model's tokens and cost.
     *
     * @param model   the model
     * @param tokens  its prompt and completion tokens over the stored answers
     * @param costUsd what they cost in USD, or null when the model has no price
     */
    public record ModelCost(String model, Usage tokens, Double costUsd) {
    }

    /** Copies the list. */
    public RunCosts {
        models = List.copyOf(models);
    }

    /** The costs of the run whose statistics these are, at {@code prices}. */
    public static RunCosts of(RunStats stats, Prices prices) {
        List<ModelCost> models = new ArrayList<>();
        for (RunStats.ModelStats m : stats.models()) {
            Usage tokens = new Usage(m.promptTokens(), m.completionTokens());
            models.add(new ModelCost(m.model(), tokens, prices.cost(m.model(), tokens).orElse(null)));
        }
        return new RunCosts(models, !prices.isEmpty());
    }

    /**
     * What one stored answer cost in USD: its {@linkplain SampleRow#chargedUsage() charged tokens}
     * at its model's price, so 0 for an answer the cache served; null when its model has no price
     * (and a model gave the answer). Over a run's answers these add up to {@link #totalUsd()} (to rounding).
     */
    public static Double answerUsd(SampleRow answer, Prices prices) {
        if (answer.cached()) {
            return 0.0;
        }
        return prices.cost(answer.model(), answer.chargedUsage()).orElse(null);
    }

    /**
     * What model calls whose answers were never stored cost at {@code prices}, in USD: the sum
     * over the priced models of {@code spend}; null when none of them has a price (or nothing was
     * spent).
     */
    public static Double unstoredUsd(List<UnstoredSpend> spend, Prices prices) {
        Double usd = null;
        for (UnstoredSpend u : spend) {
            Double c = prices.cost(u.model(), u.tokens()).orElse(null);
            if (c != null) {
                usd = (usd == null ? 0 : usd) + c;
            }
        }
        return usd;
    }

    /** The cost of every priced model, in USD; null when no model has a price. */
    public Double totalUsd() {
        Double total = null;
        for (ModelCost m : models) {
            if (m.costUsd() != null) {
                total = (total == null ? 0 : total) + m.costUsd();
            }
        }
        return total;
    }

    /** The summary's cost lines ("" without prices): the total, then one line per model. */
    public String render() {
        if (!pricing) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "  cost:        %s USD%s%n", totalText(), unpricedNote()));
        for (ModelCost m : models) {
            sb.append(String.format(Locale.ROOT, "    %s: %s%n", m.model(), m.costUsd() == null ? NO_PRICE
                    : Figures.usd(m.costUsd()) + " USD"));
        }
        return sb.toString();
    }

    /** The total as every report prints it, in USD without the unit: {@code 0.0123}, or n/a when nothing is priced. */
    public String totalText() {
        Double total = totalUsd();
        return total == null ? Figures.NOT_AVAILABLE : Figures.usd(total);
    }

    /** One model's cost as the report prints it, in USD without the unit, or "no price" (or n/a when not in the run). */
    public String modelText(String model) {
        return models.stream().filter(m -> m.model().equals(model)).findFirst()
                .map(m -> m.costUsd() == null ? NO_PRICE : Figures.usd(m.costUsd())).orElse(Figures.NOT_AVAILABLE);
    }

    /** What the total leaves out, after it: " (without b: no --price for it)", or "" when every model is priced. */
    public String unpricedNote() {
        List<String> unpriced = models.stream().filter(m -> m.costUsd() == null).map(ModelCost::model).toList();
        return unpriced.isEmpty() ? "" : " (without " + String.join(", ", unpriced) + ": no --price for "
                + (unpriced.size() == 1 ? "it" : "them") + ")";
    }
}

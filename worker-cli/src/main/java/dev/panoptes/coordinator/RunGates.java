package dev.panoptes.coordinator;

import dev.panoptes.control.cost.CostBudget;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.report.RunCosts;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunStats;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * What a run is held to and reports for a CI job, beyond completing its jobs: the share of failed
 * answers it may have ({@code --max-error-rate}), the accuracy every model must reach
 * ({@code --fail-under}), token prices and a cost budget ({@code --price}, {@code --max-cost}), and
 * where its summary goes as JSON ({@code --summary-json}). Each gate has its own exit code
 * ({@link CoordinatorRun}'s {@code EXIT_*}); {@link RunEnding} applies them. Immutable; the
 * {@code with...} methods return copies.
 */
public final class RunGates {
    /** No gate: any failed answer fails the run, no accuracy floor, no prices, no budget, no JSON. */
    public static final RunGates NONE = new RunGates(0, Double.NaN, Prices.NONE, null, null);

    private final double maxErrorRate;
    private final double failUnder;
    private final Prices prices;
    private final Double maxCostUsd;
    private final Path summaryJson;

    private RunGates(double maxErrorRate, double failUnder, Prices prices, Double maxCostUsd, Path summaryJson) {
        this.maxErrorRate = maxErrorRate;
        this.failUnder = failUnder;
        this.prices = prices;
        this.maxCostUsd = maxCostUsd;
        this.summaryJson = summaryJson;
    }

    /**
     * The share (0 to 1) of the answers stored that may be failed answers; above it the run exits
     * {@link CoordinatorRun#EXIT_ERROR_RATE}. Default 0: any failed answer.
     *
     * @throws IllegalArgumentException when not within 0 to 1
     */
    public RunGates withMaxErrorRate(double rate) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new IllegalArgumentException("the maximum error rate must be from 0 to 1, got " + rate);
        }
        return new RunGates(rate, failUnder, prices, maxCostUsd, summaryJson);
    }

    /**
     * The accuracy (mean score, 0 to 1) every model must reach; a model below it (or with no
     * scored answer) makes the run exit {@link CoordinatorRun#EXIT_FAIL_UNDER}.
     *
     * @throws IllegalArgumentException when not within 0 to 1
     */
    public RunGates withFailUnder(double score) {
        if (!(score >= 0 && score <= 1)) {
            throw new IllegalArgumentException("the accuracy floor must be from 0 to 1, got " + score);
        }
        return new RunGates(maxErrorRate, score, prices, maxCostUsd, summaryJson);
    }

    /** Token prices, for the cost in the summary and for the budget. */
    public RunGates withPrices(Prices value) {
        return new RunGates(maxErrorRate, failUnder, java.util.Objects.requireNonNull(value), maxCostUsd,
                summaryJson);
    }

    /**
     * A budget in USD: once the answers stored (this run's and an earlier one's it resumes) cost
     * this much, no new job is sent; jobs in flight land and are stored, and the run exits
     * {@link CoordinatorRun#EXIT_BUDGET}. Every model of the run needs a price.
     *
     * @throws IllegalArgumentException when negative or not a number
     */
    public RunGates withMaxCost(double usd) {
        if (!(usd >= 0) || Double.isInfinite(usd)) {
            throw new IllegalArgumentException("the cost budget must be 0 USD or more, got " + usd);
        }
        return new RunGates(maxErrorRate, failUnder, prices, usd, summaryJson);
    }

    /** Where to write the summary as JSON ({@link SummaryJson}); null for nowhere. */
    public RunGates withSummaryJson(Path file) {
        return new RunGates(maxErrorRate, failUnder, prices, maxCostUsd, file);
    }

    /** The share of failed answers allowed, 0 to 1. */
    public double maxErrorRate() {
        return maxErrorRate;
    }

    /** The accuracy floor, or NaN for none. */
    public double failUnder() {
        return failUnder;
    }

    /** The token prices; {@link Prices#NONE} when none were given. */
    public Prices prices() {
        return prices;
    }

    /** The budget in USD, or null for none. */
    public Double maxCostUsd() {
        return maxCostUsd;
    }

    /** The summary JSON file, or null. */
    public Path summaryJson() {
        return summaryJson;
    }

    /** The models among {@code models} that the budget needs a price for and that have none; empty without a budget. */
    public List<String> unpricedUnderBudget(Collection<String> models) {
        return maxCostUsd == null ? List.of() : prices.unpriced(models);
    }

    /** The models whose accuracy is below the floor (or that have no scored answer); empty without one. */
    public List<RunStats.ModelStats> below(RunStats stats) {
        if (Double.isNaN(failUnder)) {
            return List.of();
        }
        return stats.models().stream().filter(m -> !(m.accuracy().mean() >= failUnder)).toList();
    }

    /**
     * The budget for the run {@code runId}, counting what the answers it stored already cost and
     * what its earlier sittings spent on answers never stored ({@link JdbcResultStore#unstoredSpend});
     * null without one.
     */
    CostBudget budgetFor(JdbcResultStore store, String runId, int scoringNumber) {
        if (maxCostUsd == null) {
            return null;
        }
        // Streamed: a resumed run of a million answers must not hold them to price them.
        RunStats stored = RunDataLoader.stats(store, runId, scoringNumber, null, null);
        Double spent = RunCosts.of(stored, prices).totalUsd();
        Double unstored = RunCosts.unstoredUsd(store.unstoredSpend(runId), prices);
        return new CostBudget(prices, maxCostUsd).alreadySpent(spent == null ? 0 : spent)
                .alreadySpentUnstored(unstored == null ? 0 : unstored);
    }
}

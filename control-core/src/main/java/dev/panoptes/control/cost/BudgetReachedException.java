package dev.panoptes.control.cost;

import java.util.Locale;

/**
 * The reason a run stopped because its {@link CostBudget} was spent: the failure a guarded
 * worker source reports, so that the scheduler stops the way it does when its source fails
 * (what was stored stays stored, nothing is recorded failed, running the same jobs again resumes).
 */
public final class BudgetReachedException extends RuntimeException {
    private final double maxUsd;
    private final double spentUsd;

    /** @param maxUsd the budget; @param spentUsd what the stored answers cost when it stopped */
    public BudgetReachedException(double maxUsd, double spentUsd) {
        super(String.format(Locale.ROOT, "the cost budget of %.4f USD (--max-cost) is reached: the answers stored"
                + " cost %.4f USD", maxUsd, spentUsd), null, false, false);
        this.maxUsd = maxUsd;
        this.spentUsd = spentUsd;
    }

    /** The budget, in USD. */
    public double maxUsd() {
        return maxUsd;
    }

    /** What the stored answers cost when the run stopped, in USD. */
    public double spentUsd() {
        return spentUsd;
    }
}

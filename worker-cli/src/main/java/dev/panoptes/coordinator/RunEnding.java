package dev.panoptes.coordinator;

import dev.panoptes.control.Plural;
import dev.panoptes.control.cost.CostBudget;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.store.RunStop;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.report.Figures;
import dev.panoptes.report.RunCosts;
import dev.panoptes.report.RunStats;

import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How a finished run ends once its summary is known: which exit code its {@link RunGates} give it
 * (in this order: the budget stopped it or was exceeded, jobs failed for good or answers were left ungraded, too
 * many failed answers, a model below the accuracy floor, else 0), the summary's lines that say
 * why, and its cost. Made and used on the run's thread; immutable.
 */
final class RunEnding {
    private final RunSummary summary;
    private final RunGates gates;
    private final CostBudget budget;
    private final boolean graded;
    private final RunCosts costs;
    private final List<RunStats.ModelStats> below;
    private final AttemptSpend unstored;

    /**
     * @param budget the run's budget, or null without one
     * @param graded false when answers were left ungraded (a judge's jobs failed)
     */
    RunEnding(RunSummary summary, RunGates gates, CostBudget budget, boolean graded) {
        this(summary, gates, budget, graded, new AttemptSpend());
    }

    /**
     * As {@link #RunEnding(RunSummary, RunGates, CostBudget, boolean)}, with what the run's failed
     * attempts spent on answers not stored.
     */
    RunEnding(RunSummary summary, RunGates gates, CostBudget budget, boolean graded, AttemptSpend unstored) {
        this.unstored = unstored;
        this.summary = summary;
        this.gates = gates;
        this.budget = budget;
        this.graded = graded;
        this.costs = RunCosts.of(summary.stats(), gates.prices());
        this.below = gates.below(summary.stats());
    }

    /**
     * The report of a run its budget stopped, from what the store holds: the scheduler's own
     * report is lost with the stop, and its jobs' counts are the store's.
     */
    static RunReport stoppedReport(JobPlan plan, ResultStore store, Duration elapsed) {
        int complete = store.completedAmong(plan.jobs()).size();
        return new RunReport(plan.jobs().size(), 0, complete, List.of(), 0, 0, 0, Map.of(), elapsed);
    }

    RunCosts costs() {
        return costs;
    }

    /** True when the budget stopped the run before every job was sent. */
    boolean stoppedByBudget() {
        return budget != null && budget.stopped() && !summary.allCompleted();
    }

    /** True when more was spent than the budget, however the run ended: a gate must not pass then. */
    boolean overBudget() {
        return budget != null && budget.exceeded();
    }

    /** The exit code, as the class comment orders the reasons. */
    int exitCode() {
        if (stoppedByBudget() || overBudget()) {
            return CoordinatorRun.EXIT_BUDGET;
        }
        if (!summary.allCompleted() || !graded) {
            return CoordinatorRun.EXIT_INCOMPLETE;
        }
        if (summary.failedAnswers().exceed(gates.maxErrorRate())) {
            return CoordinatorRun.EXIT_ERROR_RATE;
        }
        return below.isEmpty() ? 0 : CoordinatorRun.EXIT_FAIL_UNDER;
    }

    /** The lines after the summary's own: the cost, then each gate that decides the exit code. */
    String render() {
        StringBuilder sb = new StringBuilder(costs.render());
        int exit = exitCode();
        if (stoppedByBudget()) {
            int left = summary.jobs() - summary.jobsCompleted();
            Double next = budget.heldBackUsd();
            sb.append(String.format(Locale.ROOT, "  budget:      the run stopped: %s, the"
                    + " budget (--max-cost) is %s USD%s; no new job was sent, those in flight were stored; %s not run,"
                    + " a run of the same command with a larger --max-cost resumes: exit %d%n",
                    budget.unstoredUsd() > 0 ? Figures.usd(budget.spentUsd()) + " USD spent ("
                            + Figures.usd(budget.unstoredUsd()) + " of it on calls of failed attempts, whose answers"
                            + " were not stored)" : "the answers stored cost " + Figures.usd(budget.spentUsd()) + " USD",
                    Figures.usd(budget.maxUsd()),
                    next == null || next == 0 ? "" : ", and the next job's worst case (" + Figures.usd(next)
                            + " USD: its prompts' bytes, and --max-tokens or else the longest answer seen, at the --price) did"
                            + " not fit in what was left",
                    Plural.of(left, "job"), exit));
            if (overBudget()) {
                sb.append(overspent(exit));
            }
        } else if (overBudget()) {
            sb.append(overspent(exit));
        } else if (budget != null) {
            sb.append(String.format(Locale.ROOT, "  budget:      %s of %s USD spent (--max-cost)%n",
                    Figures.usd(budget.spentUsd()), Figures.usd(budget.maxUsd())));
        }
        if (summary.allCompleted() && summary.failedAnswers().exceed(gates.maxErrorRate())) {
            // Say why the exit code is not 0 when every job completed: the failed answers are too many.
            sb.append(RunLines.errorRate(summary.failedAnswers(), gates.maxErrorRate(),
                    CoordinatorRun.EXIT_ERROR_RATE));
        }
        for (RunStats.ModelStats m : below) {
            sb.append(String.format(Locale.ROOT, "  fail-under:  %s scored %s, below --fail-under %s%s%n", m.model(),
                    m.accuracy().n() == 0 ? "nothing (no scored answer)" : Figures.ratio(m.accuracy().mean()),
                    BigDecimal.valueOf(gates.failUnder()).stripTrailingZeros().toPlainString(),
                    exit == CoordinatorRun.EXIT_FAIL_UNDER ? ": exit " + exit : ""));
        }
        return sb.toString();
    }

    /** The line of a run that spent more than its budget. */
    private String overspent(int exit) {
        return String.format(Locale.ROOT, "  budget:      EXCEEDED: %s of %s USD spent (--max-cost); without --max-tokens"
                + " an answer's length has no bound, so a job's worst case counts the longest answer seen before"
                + " it; give --max-tokens for a hard bound: exit %d%n", Figures.usd(budget.spentUsd()),
                Figures.usd(budget.maxUsd()), exit);
    }

    /**
     * Writes the summary JSON when the gates ask for one.
     *
     * @return the run's exit code, or {@code failedCode} when the file cannot be written (said on {@code err})
     */
    int writeSummaryJson(PrintWriter err, int failedCode) {
        if (gates.summaryJson() == null) {
            return exitCode();
        }
        try {
            SummaryJson.write(gates.summaryJson(), summary, this, gates);
            return exitCode();
        } catch (IOException e) {
            err.println("cannot write the summary JSON to " + gates.summaryJson() + ": " + e);
            err.flush();
            return failedCode;
        }
    }

    /** What stopped the run short of its jobs, for the JSON summary: "budget", or null. */
    String stoppedBy() {
        return stoppedByBudget() ? "budget" : null;
    }

    CostBudget budget() {
        return budget;
    }

    /** What the run's failed attempts spent on answers not stored. */
    AttemptSpend unstored() {
        return unstored;
    }

    /**
     * What to note with the run's sitting ({@link dev.panoptes.control.store.JdbcResultStore#stopRun}):
     * the budget when it stopped the run or was exceeded (exit 7), a gate when one failed it
     * (exits 5 and 6), else null. Failed jobs and ungraded answers are not noted: the store
     * already holds them.
     */
    RunStop stop() {
        int exit = exitCode();
        if (exit == CoordinatorRun.EXIT_BUDGET) {
            String spent = Figures.usd(budget.spentUsd()) + " of " + Figures.usd(budget.maxUsd()) + " USD spent";
            return new RunStop(RunStop.BUDGET, stoppedByBudget()
                    ? "the cost budget (--max-cost) stopped the run: " + spent + "; "
                            + Plural.of(summary.jobs() - summary.jobsCompleted(), "job") + " not run"
                    : "the cost budget (--max-cost) was exceeded: " + spent);
        }
        if (exit == CoordinatorRun.EXIT_ERROR_RATE) {
            return new RunStop(RunStop.GATE, RunLines.errorRate(summary.failedAnswers(), gates.maxErrorRate(), exit)
                    .strip().replaceFirst("^error rate:\\s+", "--max-error-rate failed: "));
        }
        if (exit == CoordinatorRun.EXIT_FAIL_UNDER) {
            List<String> each = below.stream().map(m -> m.model() + " " + (m.accuracy().n() == 0 ? "scored nothing"
                    : Figures.ratio(m.accuracy().mean()))).toList();
            return new RunStop(RunStop.GATE, "--fail-under " + BigDecimal.valueOf(gates.failUnder())
                    .stripTrailingZeros().toPlainString() + " failed: " + String.join(", ", each) + ": exit " + exit);
        }
        return null;
    }

    List<RunStats.ModelStats> below() {
        return below;
    }
}

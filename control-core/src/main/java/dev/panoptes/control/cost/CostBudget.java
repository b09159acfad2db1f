package dev.panoptes.control.cost;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.schedule.DispatchGate;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.ResultStore;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A spending limit on one scheduler run: once the answers stored cost {@code maxUsd} or more, no
 * new job is sent; the jobs in flight finish and are stored; then the run stops as if its worker
 * source had failed, with a {@link BudgetReachedException}. Nothing stored is lost and nothing is
 * recorded failed, so running the same jobs again (with a larger budget) resumes. What lands
 * beyond the budget is bounded by the jobs in flight and the answers waiting for the store when it
 * was reached; a run whose jobs all landed by then simply completes ({@link #stopped()} stays false).
 *
 * <p>It works through the scheduler's seams only: as its {@link ProgressListener} it adds up the
 * cost of each job's answers when the store took them (and tracks the jobs in the air); as its
 * {@link DispatchGate} ({@link #gate}) it refuses dispatches once the budget is spent; and the
 * {@link WorkerSource} it wraps ({@link #guard}) reports the failure that ends the run once no job
 * is in the air. Wire all three into one run:
 * <pre>{@code
 * CostBudget budget = new CostBudget(prices, 5.00);
 * SchedulerOptions options = budget.applyTo(SchedulerOptions.defaults());  // its listener and gate, besides theirs
 * new Scheduler(budget.guard(source), store, options).run(jobs);  // WorkerSourceFailedException when spent
 * }</pre>
 *
 * <p>Threads: every listener and gate method runs on the scheduler's thread, and so does the
 * guarded source's {@link WorkerSource#failure()} there; {@link #spentUsd()} and {@link #reached()}
 * may be read from any thread. One run per instance.
 */
public final class CostBudget implements ProgressListener {
    private final Prices prices;
    private final double maxUsd;
    /** Jobs dispatched and neither stored, failed nor sent back to wait. Scheduler thread only. */
    private final Set<JobId> inTheAir = new HashSet<>();
    private volatile double spentUsd;
    /** Set once the budget is spent and nothing is in the air: the run is to stop. */
    private volatile BudgetReachedException stop;

    /**
     * @param prices what each model's tokens cost; every model the run asks must have one
     * @param maxUsd the budget in USD; 0 or more
     * @throws IllegalArgumentException when the budget is negative or not a number
     */
    public CostBudget(Prices prices, double maxUsd) {
        if (!(maxUsd >= 0) || Double.isInfinite(maxUsd)) {
            throw new IllegalArgumentException("the cost budget must be 0 USD or more, got " + maxUsd);
        }
        this.prices = Objects.requireNonNull(prices, "prices");
        this.maxUsd = maxUsd;
    }

    /**
     * Counts what answers stored before this run (an earlier run that is resumed) cost, so that the
     * budget is the whole run's. Before the run starts.
     */
    public CostBudget alreadySpent(double usd) {
        spentUsd += usd;
        return this;
    }

    /** The budget, in USD. */
    public double maxUsd() {
        return maxUsd;
    }

    /** What the answers stored so far cost, in USD (earlier runs' included). Any thread. */
    public double spentUsd() {
        return spentUsd;
    }

    /** True once the budget is spent (dispatching has stopped). Any thread. */
    public boolean reached() {
        return spentUsd >= maxUsd;
    }

    /** True once the run was stopped by this budget (it was spent and nothing was left in the air). Any thread. */
    public boolean stopped() {
        return stop != null;
    }

    /**
     * {@code options} with this budget told of the run's progress after their listener, and
     * asked before their gate.
     */
    public SchedulerOptions applyTo(SchedulerOptions options) {
        return options.withListener(ProgressListener.fanOut(List.of(options.listener(), this)))
                .withGate(gate(options.gate()));
    }

    /** The gate to give the run: {@code inner}'s, and nothing at all once the budget is spent. */
    public DispatchGate gate(DispatchGate inner) {
        Objects.requireNonNull(inner, "inner");
        return new DispatchGate() {
            @Override
            public void onWorkers(List<WorkerHandle> workers) {
                inner.onWorkers(workers);
            }

            @Override
            public boolean tryAcquire(WorkerHandle worker) {
                return !reached() && inner.tryAcquire(worker);
            }

            @Override
            public void release(WorkerHandle worker, boolean succeeded) {
                inner.release(worker, succeeded);
            }
        };
    }

    /** The worker source to give the run: {@code source}, failing with the budget once the run is to stop. */
    public WorkerSource guard(WorkerSource source) {
        Objects.requireNonNull(source, "source");
        return new WorkerSource() {
            @Override
            public List<WorkerHandle> snapshot() {
                return source.snapshot();
            }

            @Override
            public void addListener(Runnable onChange) {
                source.addListener(onChange);
            }

            @Override
            public void removeListener(Runnable onChange) {
                source.removeListener(onChange);
            }

            @Override
            public Throwable failure() {
                Throwable failure = source.failure();
                return failure != null ? failure : stop;
            }
        };
    }

    @Override
    public void onStart(int toRun, int skipped) {
        settle();
    }

    @Override
    public void onDispatched(Job job, WorkerHandle worker, int attempt) {
        inTheAir.add(job.id());
    }

    @Override
    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
        spentUsd += prices.cost(job, outcome);
        inTheAir.remove(job.id());
        settle();
    }

    @Override
    public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
        inTheAir.remove(job.id());
        settle();
    }

    @Override
    public void onFailed(Job job, String reason, int attempts) {
        inTheAir.remove(job.id());
        settle();
    }

    /** Spent, and nothing left to land: the guarded source fails from now on. */
    private void settle() {
        if (stop == null && reached() && inTheAir.isEmpty()) {
            stop = new BudgetReachedException(maxUsd, spentUsd);
        }
    }
}

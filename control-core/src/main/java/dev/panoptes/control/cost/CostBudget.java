package dev.panoptes.control.cost;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.schedule.DispatchGate;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.ResultStore;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;

/**
 * A spending limit on one scheduler run that bounds what can be spent: before a job is sent, its
 * worst case (below) is reserved, and a job whose worst case does not fit in what is left of the
 * budget (after what was spent and what the jobs in flight reserved) waits for them to land; when a
 * job's answers are stored, what they cost is spent and its reservation released (so the
 * difference goes back); when an attempt fails, what its calls that answered cost is spent (those
 * answers are paid for, though not stored) and its reservation released. Once a job does not
 * fit with no job in the air, the run stops as if its worker source had failed, with a
 * {@link BudgetReachedException}. Nothing stored is lost and nothing is recorded failed, so running
 * the same jobs again (with a larger budget) resumes.
 *
 * <p><b>A job's worst case</b> is what its vignettes' requests cost at most at the model's price:
 * per request, the prompt's tokens bounded by its UTF-8 bytes (every tokenizer in use, BPE or
 * SentencePiece with byte fallback, gives a token at least one byte of text) plus
 * {@value #TOKENS_PER_MESSAGE} tokens per message and {@value #TOKENS_PER_REQUEST} per request for
 * the chat template's markers, and the answer's tokens bounded by the run's max tokens. Without
 * max tokens the answer's length has no bound: the longest answer (in tokens) seen so far in the
 * run stands for it, and until an answer is costed only one job is in the air at a time; the
 * bound then holds only as far as no later answer is longer, and {@link #exceeded()} says when it
 * did not.
 *
 * <p>It works through the scheduler's seams only: as its {@link ProgressListener} it adds up the
 * cost of each job's answers when the store took them (and releases reservations); as its
 * {@link DispatchGate} ({@link #gate}) it reserves each job's worst case or holds the job back;
 * and the {@link WorkerSource} it wraps ({@link #guard}) reports the failure that ends the run
 * once no job is in the air. Wire all three into one run:
 * <pre>{@code
 * CostBudget budget = new CostBudget(prices, 5.00);
 * SchedulerOptions options = budget.applyTo(SchedulerOptions.defaults());  // its listener and gate, besides theirs
 * new Scheduler(budget.guard(source), store, options).run(jobs);  // WorkerSourceFailedException when spent
 * }</pre>
 *
 * <p>Threads: every listener and gate method runs on the scheduler's thread, and so does the
 * guarded source's {@link WorkerSource#failure()} there; {@link #spentUsd()}, {@link #reached()},
 * {@link #stopped()} and {@link #exceeded()} may be read from any thread. One run per instance.
 */
public final class CostBudget implements ProgressListener {
    /** Tokens a chat template adds per message (role markers, separators), at most. */
    public static final int TOKENS_PER_MESSAGE = 8;
    /** Tokens a chat template adds per request (the assistant's opening), at most. */
    public static final int TOKENS_PER_REQUEST = 8;

    private final Prices prices;
    private final double maxUsd;
    /** Jobs dispatched and neither stored, failed nor sent back to wait, with what each reserved. Scheduler thread only. */
    private final Map<JobId, Double> inTheAir = new HashMap<>();
    /** The sum of {@link #inTheAir}'s reservations. Scheduler thread only. */
    private double reservedUsd;
    /** The most completion tokens one answer took so far (for runs without max tokens). Scheduler thread only. */
    private long longestAnswer = -1;
    private volatile double spentUsd;
    /** The part of spentUsd paid for answers not stored (attempts that failed, now or in earlier sittings). */
    private volatile double unstoredUsd;
    /** The worst case of the first job held back, or null while every job fit. */
    private volatile Double heldBackUsd;
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

    /**
     * Counts what earlier sittings of a resumed run spent on model calls whose answers were never
     * stored (kept with the sittings by the store), so that the budget is the whole run's: spent,
     * and part of {@link #unstoredUsd()}. Before the run starts.
     *
     * @throws IllegalArgumentException when negative or not a number
     */
    public CostBudget alreadySpentUnstored(double usd) {
        if (!(usd >= 0) || Double.isInfinite(usd)) {
            throw new IllegalArgumentException("what earlier sittings spent on answers not stored must be 0 USD or"
                    + " more, got " + usd);
        }
        spentUsd += usd;
        unstoredUsd += usd;
        return this;
    }

    /** The budget, in USD. */
    public double maxUsd() {
        return maxUsd;
    }

    /**
     * What was spent so far, in USD: the answers stored (earlier runs' included) and the calls
     * whose answers were not stored, this run's failed attempts' and earlier sittings'
     * ({@link #unstoredUsd()}). Any thread.
     */
    public double spentUsd() {
        return spentUsd;
    }

    /**
     * What was spent on calls whose answers were not stored, in USD (part of {@link #spentUsd()}):
     * this run's failed attempts', and those of a resumed run's earlier sittings
     * ({@link #alreadySpentUnstored}). Any thread.
     */
    public double unstoredUsd() {
        return unstoredUsd;
    }

    /** True once the budget holds jobs back (dispatching has stopped). Any thread. */
    public boolean reached() {
        return heldBackUsd != null || spentUsd >= maxUsd;
    }

    /** True once the run was stopped by this budget (it held a job back and nothing was left in the air). Any thread. */
    public boolean stopped() {
        return stop != null;
    }

    /**
     * True when more was spent than the budget: possible only when a run without max tokens got an
     * answer longer than any before it, or when a resumed run had spent more already. Any thread.
     */
    public boolean exceeded() {
        return spentUsd > maxUsd;
    }

    /** The worst case of the first job the budget held back, in USD, or null when none was. Any thread. */
    public Double heldBackUsd() {
        return heldBackUsd;
    }

    /**
     * {@code options} with this budget told of the run's progress after their listener, and
     * asked before their gate.
     */
    public SchedulerOptions applyTo(SchedulerOptions options) {
        return options.withListener(ProgressListener.fanOut(List.of(options.listener(), this)))
                .withGate(gate(options.gate()));
    }

    /**
     * The gate to give the run: this budget's, then {@code inner}'s. A job goes only when its worst
     * case fits in what is left; it is then reserved until the job is stored or its attempt fails.
     */
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
            public boolean tryAcquire(WorkerHandle worker, Job job) {
                Double worst = fits(job);
                if (worst == null || !inner.tryAcquire(worker, job)) {
                    return false;
                }
                inTheAir.put(job.id(), worst);
                reservedUsd += worst;
                return true;
            }

            @Override
            public void release(WorkerHandle worker, boolean succeeded) {
                inner.release(worker, succeeded);
            }
        };
    }

    /**
     * The job's worst case when it fits in what is left, else null. A job that does not fit while
     * others are in the air waits for them to land (their reservations come back); one that does
     * not fit with nothing in the air never will: the budget then holds every job back, so that a
     * later, smaller job does not slip past it, and the run stops.
     */
    private Double fits(Job job) {
        if (heldBackUsd != null || stop != null) {
            return null;
        }
        if (job.spec().params().maxTokens() == null && longestAnswer < 0 && !inTheAir.isEmpty()) {
            // No bound on an answer's length yet: one job at a time until one is costed.
            return null;
        }
        double worst = worstCaseUsd(job);
        if (spentUsd + reservedUsd + worst > maxUsd) {
            if (inTheAir.isEmpty()) {
                heldBackUsd = worst;
                settle();
            }
            return null;
        }
        return worst;
    }

    /** What the job's requests cost at most, in USD (see the class comment); 0 for a model without a price. */
    double worstCaseUsd(Job job) {
        Optional<Price> price = prices.price(job.model());
        if (price.isEmpty()) {
            return 0;
        }
        SpecParams params = job.spec().params();
        long completion = params.maxTokens() != null ? params.maxTokens() : Math.max(0, longestAnswer);
        long promptTokens = 0;
        long completionTokens = 0;
        for (Vignette v : job.spec().vignettes()) {
            promptTokens += promptTokenBound(params, v);
            completionTokens += completion;
        }
        return (promptTokens * price.get().inputPerMillion() + completionTokens * price.get().outputPerMillion())
                / 1_000_000.0;
    }

    /** At least the prompt tokens of the vignette's request: see the class comment. */
    static long promptTokenBound(SpecParams params, Vignette v) {
        long tokens = TOKENS_PER_REQUEST;
        if (params.system() != null) {
            tokens += TOKENS_PER_MESSAGE + utf8Bytes(params.system());
        }
        for (ChatMessage m : v.turns()) {
            tokens += TOKENS_PER_MESSAGE + utf8Bytes(m.content());
        }
        return tokens;
    }

    private static long utf8Bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
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
        if (spentUsd >= maxUsd && toRun > 0) {
            heldBackUsd = 0.0;
        }
        settle();
    }

    @Override
    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
        spentUsd += prices.cost(job, outcome);
        for (ResponseRecord r : outcome.records()) {
            if (r.usage() != null) {
                longestAnswer = Math.max(longestAnswer, r.usage().completionTokens());
            }
        }
        landed(job);
    }

    /**
     * The calls of a failed attempt that answered were paid for though their answers are not
     * stored: spent all the same. The job's reservation stays until the failure lands.
     */
    @Override
    public void onAttemptSpent(Job job, WorkerHandle worker, Usage usage) {
        double usd = prices.cost(job.model(), usage).orElse(0.0);
        spentUsd += usd;
        unstoredUsd += usd;
    }

    @Override
    public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
        landed(job);
    }

    @Override
    public void onFailed(Job job, String reason, int attempts) {
        landed(job);
    }

    /** The job is out of the air: its reservation goes back. */
    private void landed(Job job) {
        Double reserved = inTheAir.remove(job.id());
        if (reserved != null) {
            reservedUsd = inTheAir.isEmpty() ? 0 : reservedUsd - reserved;
        }
        settle();
    }

    /** Held back, and nothing left to land: the guarded source fails from now on. */
    private void settle() {
        if (stop == null && reached() && inTheAir.isEmpty()) {
            stop = new BudgetReachedException(maxUsd, spentUsd);
        }
    }
}

package dev.panoptes.control.cost;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.schedule.DispatchGate;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A budget stops a scheduler run through its gate, listener and source, keeping what was stored. */
class CostBudgetTest {
    @Test
    void onceTheStoredAnswersCostTheBudgetNoJobIsSentAndTheRunStopsWithWhatWasStored() {
        // Each job's one answer costs 1,000,000 prompt tokens at 1 USD: 1 USD a job.
        // One worker serving model m, two slots; each job's one answer costs 1,000,000 prompt tokens at 1 USD.
        WorkerHandle worker = new WorkerHandle() {
            @Override
            public String id() {
                return "w1";
            }

            @Override
            public Set<String> models() {
                return Set.of("m");
            }

            @Override
            public int capacity() {
                return 2;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                List<ResponseRecord> records = new ArrayList<>();
                for (var v : job.spec().vignettes()) {
                    records.add(new ResponseRecord(v.id(), "ok", "m", "stop", 1L, new Usage(1_000_000, 0)));
                }
                // A model call takes a moment: the store keeps up, as it does with a real model.
                return CompletableFuture.supplyAsync(() -> new JobOutcome(job.id(), records),
                        CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS, Runnable::run));
            }
        };
        WorkerSource source = () -> List.of(worker);
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Job plain = TestJobs.job("j" + i, "p");
            jobs.add(new Job(plain.id(), new EvalSpec("test", plain.spec().vignettes(), SpecParams.NONE.withModel("m"))));
        }
        CostBudget budget = new CostBudget(Prices.of(java.util.Map.of("m", new Price(1, 0))), 3.0);
        InMemoryResultStore store = new InMemoryResultStore();

        assertThatThrownBy(() -> new Scheduler(budget.guard(source), store, budget.applyTo(SchedulerOptions.defaults()
                .withPollInterval(Duration.ofMillis(10)).withGate(DispatchGate.OPEN)))
                .run(jobs))
                .isInstanceOf(WorkerSourceFailedException.class).hasCauseInstanceOf(BudgetReachedException.class);

        assertThat(budget.stopped()).isTrue();
        // Beyond the budget land only the jobs in flight (two slots) and answers not yet stored when it was reached.
        assertThat(store.recordCount()).isBetween(3L, 10L);
        assertThat(budget.spentUsd()).isEqualTo((double) store.recordCount());
    }

    @Test
    void aJobGoesOnlyWhenItsWorstCaseFitsBesideWhatWasSpentAndWhatTheJobsInFlightReserved() {
        // Prompt "p": 1 byte + 8 + 8 template tokens = 17, at most 3 answer tokens: 20 tokens, 20 USD at
        // 1 USD per token. Each answer costs 5 USD. 64 slots: without reservations all 20 jobs would fly at once.
        java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger peak = new java.util.concurrent.atomic.AtomicInteger();
        WorkerHandle worker = new WorkerHandle() {
            @Override
            public String id() {
                return "w1";
            }

            @Override
            public Set<String> models() {
                return Set.of("m");
            }

            @Override
            public int capacity() {
                return 64;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                List<ResponseRecord> records = new ArrayList<>();
                for (var v : job.spec().vignettes()) {
                    records.add(new ResponseRecord(v.id(), "ok", "m", "stop", 1L, new Usage(4, 1)));
                }
                return CompletableFuture.supplyAsync(() -> {
                    inFlight.decrementAndGet();
                    return new JobOutcome(job.id(), records);
                }, CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS, Runnable::run));
            }
        };
        WorkerSource source = () -> List.of(worker);
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Job plain = TestJobs.job("j" + i, "p");
            jobs.add(new Job(plain.id(), new EvalSpec("test", plain.spec().vignettes(),
                    new SpecParams(null, null, 3, null, "m"))));
        }
        CostBudget budget = new CostBudget(Prices.of(java.util.Map.of("m", new Price(1_000_000, 1_000_000))), 50.0);
        InMemoryResultStore store = new InMemoryResultStore();

        assertThatThrownBy(() -> new Scheduler(budget.guard(source), store, budget.applyTo(SchedulerOptions.defaults()
                .withPollInterval(Duration.ofMillis(10)).withGate(DispatchGate.OPEN)))
                .run(jobs))
                .isInstanceOf(WorkerSourceFailedException.class).hasCauseInstanceOf(BudgetReachedException.class);

        assertThat(peak.get()).as("50 USD holds two worst cases of 20 at once").isLessThanOrEqualTo(2);
        assertThat(budget.spentUsd()).isLessThanOrEqualTo(50.0).isEqualTo(5.0 * store.recordCount());
        // 30 spent leaves 20: one more fits; 35 spent leaves 15: none.
        assertThat(store.recordCount()).isEqualTo(7);
        assertThat(budget.heldBackUsd()).isEqualTo(20.0);
        assertThat(budget.exceeded()).isFalse();
    }

    @Test
    void whatEarlierSittingsSpentOnAnswersNeverStoredIsSpentAndPartOfTheUnstoredPart() {
        CostBudget budget = new CostBudget(Prices.of(java.util.Map.of("m", new Price(1, 0))), 2.0)
                .alreadySpent(0.5).alreadySpentUnstored(1.0);

        assertThat(budget.spentUsd()).isEqualTo(1.5);
        assertThat(budget.unstoredUsd()).isEqualTo(1.0);
        assertThat(budget.reached()).isFalse();
        assertThat(budget.alreadySpentUnstored(0.5).reached()).as("2.0 of 2.0 USD spent").isTrue();
        assertThat(budget.alreadySpentUnstored(0).spentUsd()).as("a resumed run whose sittings stored everything")
                .isEqualTo(2.0);
        assertThatThrownBy(() -> budget.alreadySpentUnstored(-0.1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-0.1");
        assertThatThrownBy(() -> budget.alreadySpentUnstored(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }
}

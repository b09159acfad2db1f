package dev.panoptes.control.schedule;

import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.local.LocalPool;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.StoredRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class SchedulerTest {
    private final LocalPool pool = new LocalPool();
    private final InMemoryResultStore store = new InMemoryResultStore();
    private final ExecutorService background = Executors.newCachedThreadPool();
    private final SchedulerOptions fast = SchedulerOptions.defaults()
            .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
            .withWaitForWorkers(Duration.ofSeconds(10));

    @AfterEach
    void tearDown() {
        pool.close();
        background.shutdownNow();
    }

    @Test
    void everyJobCompletesAndIsStoredOnce() throws Exception {
        pool.start("a", 3, TestJobs.echoRunner());
        pool.start("b", 2, TestJobs.echoRunner());
        List<Job> jobs = TestJobs.jobs("j", 200);

        RunReport report = new Scheduler(pool, store, fast).run(jobs);

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completed()).isEqualTo(200);
        assertThat(report.attempts()).isEqualTo(200);
        assertThat(report.redeliveries()).isZero();
        assertThat(store.recordCount()).isEqualTo(200);
        assertThat(report.completedByWorker().values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(200);
    }

    @Test
    void neverRunsMoreJobsOnAWorkerThanItsCapacity() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        pool.start("a", 3, job -> {
            int now = running.incrementAndGet();
            maxRunning.accumulateAndGet(now, Math::max);
            Thread.onSpinWait();
            running.decrementAndGet();
            return TestJobs.echo(job);
        });
        CountingSource counting = new CountingSource(pool);
        new Scheduler(counting, store, fast).run(TestJobs.jobs("j", 300));
        assertThat(counting.maxOutstanding.get()).isLessThanOrEqualTo(3);
        assertThat(maxRunning.get()).isLessThanOrEqualTo(3);
    }

    @Test
    void jobsOfAWorkerThatAlwaysFailsRetryablyGoToTheOthers() throws Exception {
        pool.start("broken", 4, job -> {
            throw new WorkerException("model API unreachable from worker broken");
        });
        pool.start("good", 2, TestJobs.echoRunner());

        RunReport report = new Scheduler(pool, store, fast.withMaxAttempts(3)).run(TestJobs.jobs("j", 50));

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completedByWorker()).containsOnlyKeys("good");
        assertThat(report.redeliveries()).isPositive();
        store.forEachRecord(r -> assertThat(r.workerId()).isEqualTo("good"));
    }

    @Test
    void whenEveryWorkerFailsRetryablyEachJobStopsAfterTheConfiguredAttempts() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        pool.start("x", 2, job -> {
            calls.incrementAndGet();
            throw new WorkerException("connection lost");
        });
        pool.start("y", 2, job -> {
            calls.incrementAndGet();
            throw new WorkerException("connection lost");
        });

        RunReport report = new Scheduler(pool, store, fast.withMaxAttempts(4)).run(TestJobs.jobs("j", 10));

        assertThat(report.completed()).isZero();
        assertThat(report.failed()).hasSize(10).allSatisfy(f -> {
            assertThat(f.attempts()).isEqualTo(4);
            assertThat(f.reason()).contains("gave up after 4 attempts").contains("connection lost");
        });
        assertThat(calls.get()).isEqualTo(40);
        assertThat(report.attempts()).isEqualTo(40);
        assertThat(report.redeliveries()).isEqualTo(30);
        List<String> stored = new ArrayList<>();
        store.forEachFailure(f -> stored.add(f.jobId().value()));
        assertThat(stored).hasSize(10);
    }

    @Test
    void aNonRetryableFailureIsNotRetried() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        pool.start("a", 2, job -> {
            calls.incrementAndGet();
            if (job.id().value().equals("j-3")) {
                throw new JobFailedException("model API answered 400: prompt too long");
            }
            return TestJobs.echo(job);
        });

        RunReport report = new Scheduler(pool, store, fast).run(TestJobs.jobs("j", 10));

        assertThat(report.completed()).isEqualTo(9);
        assertThat(report.failed()).singleElement().satisfies(f -> {
            assertThat(f.jobId().value()).isEqualTo("j-3");
            assertThat(f.attempts()).isEqualTo(1);
            assertThat(f.reason()).isEqualTo("model API answered 400: prompt too long");
        });
        assertThat(calls.get()).isEqualTo(10);
    }

    @Test
    void withOneSlowAndOneFastWorkerTheFastOneCompletesMostJobs() throws Exception {
        Semaphore slowGate = new Semaphore(0);
        pool.start("slow", 1, job -> {
            // Finishes one job for every five the fast worker finishes.
            slowGate.tryAcquire(5, 2, TimeUnit.SECONDS);
            return TestJobs.echo(job);
        });
        pool.start("fast", 1, job -> {
            slowGate.release();
            return TestJobs.echo(job);
        });

        RunReport report = new Scheduler(pool, store, fast).run(TestJobs.jobs("j", 120));

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completedByWorker().get("fast")).isGreaterThan(report.completedByWorker().get("slow") * 3);
    }

    @Test
    void workersThatAppearAfterTheRunStartsAreUsed() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        SchedulerOptions options = fast.withPollInterval(Duration.ofSeconds(30)).withListener(new ProgressListener() {
            @Override
            public void onStart(int toRun, int skipped) {
                waiting.countDown();
            }
        });
        Future<RunReport> run = background.submit(() -> new Scheduler(pool, store, options).run(TestJobs.jobs("j", 20)));
        assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
        pool.start("late", 2, TestJobs.echoRunner());

        // The poll interval is 30 s: finishing well before it proves the pool's listener woke the run.
        RunReport report = run.get(10, TimeUnit.SECONDS);
        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completedByWorker()).containsOnlyKeys("late");
    }

    @Test
    void aRunWithNoWorkerGivesUpAfterTheWaitLimitAndSaysWhy() throws Exception {
        RunReport report = new Scheduler(pool, store, fast.withWaitForWorkers(Duration.ofMillis(200)))
                .run(TestJobs.jobs("j", 3));
        assertThat(report.failed()).hasSize(3)
                .allSatisfy(f -> assertThat(f.reason()).contains("no worker connected").contains("start workers"));
        assertThat(report.elapsed()).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    }

    @Test
    void anEmptyJobListReturnsAtOnce() throws Exception {
        RunReport report = new Scheduler(pool, store, fast).run(List.of());
        assertThat(report.totalJobs()).isZero();
        assertThat(report.allCompleted()).isTrue();
    }

    @Test
    void aDuplicateJobIdIsRejectedBeforeAnythingIsDispatched() {
        AtomicInteger calls = new AtomicInteger();
        pool.start("a", 1, job -> {
            calls.incrementAndGet();
            return TestJobs.echo(job);
        });
        List<Job> jobs = List.of(TestJobs.job("j-1", "a"), TestJobs.job("j-2", "b"), TestJobs.job("j-1", "c"));
        assertThatThrownBy(() -> new Scheduler(pool, store, fast).run(jobs))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("job id j-1 appears more than once");
        assertThat(calls.get()).isZero();
    }

    @Test
    void jobsAlreadyCompleteInTheStoreAreNotSentAgain() throws Exception {
        List<Job> jobs = TestJobs.jobs("j", 10);
        for (Job job : jobs.subList(0, 6)) {
            store.record(TestJobs.echo(job), "earlier");
        }
        Map<String, Integer> runs = new ConcurrentHashMap<>();
        pool.start("a", 2, job -> {
            runs.merge(job.id().value(), 1, Integer::sum);
            return TestJobs.echo(job);
        });

        RunReport report = new Scheduler(pool, store, fast).run(jobs);

        assertThat(report.skipped()).isEqualTo(6);
        assertThat(report.completed()).isEqualTo(4);
        assertThat(report.allCompleted()).isTrue();
        assertThat(runs).containsOnlyKeys("j-6", "j-7", "j-8", "j-9");
    }

    @Test
    void aWrongAnswerIsTreatedAsARetryableFailureOfThatWorker() throws Exception {
        pool.start("liar", 1, job -> new JobOutcome(job.id(), List.of()));
        pool.start("honest", 1, TestJobs.echoRunner());

        RunReport report = new Scheduler(pool, store, fast).run(TestJobs.jobs("j", 20));

        assertThat(report.allCompleted()).isTrue();
        List<StoredRecord> records = new ArrayList<>();
        store.forEachRecord(records::add);
        assertThat(records).hasSize(20).allSatisfy(r -> assertThat(r.workerId()).isEqualTo("honest"));
    }

    @Test
    void aRetriedJobPrefersAWorkerItHasNotFailedOn() throws Exception {
        Map<String, List<String>> workersByJob = new ConcurrentHashMap<>();
        AtomicInteger firstFailures = new AtomicInteger();
        pool.start("flaky", 1, job -> {
            workersByJob.computeIfAbsent(job.id().value(), k -> new ArrayList<>()).add("flaky");
            firstFailures.incrementAndGet();
            throw new WorkerException("flaky");
        });
        pool.start("steady", 1, job -> {
            workersByJob.computeIfAbsent(job.id().value(), k -> new ArrayList<>()).add("steady");
            return TestJobs.echo(job);
        });

        RunReport report = new Scheduler(pool, store, fast.withMaxAttempts(2)).run(TestJobs.jobs("j", 30));

        // With 2 attempts, a job that failed on flaky and went back to flaky would fail for good.
        assertThat(report.allCompleted()).isTrue();
        workersByJob.values().forEach(ws -> assertThat(ws).endsWith("steady"));
    }

    @Test
    void aMisconfiguredWorkerIsQuarantinedAndItsFailuresCostTheJobsNoAttempts() throws Exception {
        AtomicInteger badCalls = new AtomicInteger();
        pool.start("bad", 2, job -> {
            badCalls.incrementAndGet();
            throw new WorkerFaultException("the model API at http://gpu-07:8000/v2 answered HTTP 404 for model 'llama'");
        });
        pool.start("good", 2, TestJobs.echoRunner());
        List<String> quarantined = new CopyOnWriteArrayList<>();
        SchedulerOptions options = fast.withMaxAttempts(1)
                .withQuarantine(3, Duration.ofSeconds(30), Duration.ofSeconds(30))
                .withListener(new ProgressListener() {
                    @Override
                    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration d) {
                        quarantined.add(worker.id() + " after " + failuresInARow + " for " + d.toSeconds() + " s: "
                                + reason);
                    }
                });

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 50));

        // With one attempt per job, a failure charged to the job would have failed it for good.
        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completedByWorker()).containsOnlyKeys("good");
        assertThat(quarantined).singleElement().asString()
                .startsWith("bad after 3 for 30 s: ").contains("answered HTTP 404 for model 'llama'");
        assertThat(report.quarantined()).singleElement().satisfies(q -> {
            assertThat(q.workerId()).isEqualTo("bad");
            assertThat(q.times()).isEqualTo(1);
        });
        // Quarantined at its third failure; the jobs it held then were its last.
        assertThat(badCalls.get()).isBetween(3, 4);
    }

    @Test
    void aQuarantinedWorkerThatReconnectsGetsNoJobsUntilItsQuarantineEnds() throws Exception {
        AtomicInteger callsAfterReconnect = new AtomicInteger();
        pool.start("bad", 1, job -> {
            throw new WorkerFaultException("the model API answered HTTP 401: invalid API key");
        });
        pool.start("good", 1, TestJobs.echoRunner());
        SchedulerOptions options = fast.withQuarantine(2, Duration.ofMinutes(1), Duration.ofMinutes(1))
                .withListener(new ProgressListener() {
                    @Override
                    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration d) {
                        // It drops its connection and registers again at once, as a new handle.
                        pool.remove(worker);
                        ((dev.panoptes.control.local.LocalWorker) worker).close();
                        pool.start("bad", 1, job -> {
                            callsAfterReconnect.incrementAndGet();
                            return TestJobs.echo(job);
                        });
                    }
                });

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 30));

        assertThat(report.allCompleted()).isTrue();
        assertThat(callsAfterReconnect.get()).as("jobs given to the reconnected, still quarantined worker").isZero();
        assertThat(report.completedByWorker()).containsOnlyKeys("good");
    }

    @Test
    void aRunWhoseEveryWorkerIsQuarantinedWaitsForAUsableOneInsteadOfFailingJobs() throws Exception {
        pool.start("bad", 1, job -> {
            throw new WorkerFaultException("cannot connect to the model API at 10.0.0.7:8000 (Connection refused)");
        });
        SchedulerOptions options = fast.withQuarantine(2, Duration.ofMinutes(1), Duration.ofMinutes(1))
                .withListener(new ProgressListener() {
                    @Override
                    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration d) {
                        pool.start("good", 2, TestJobs.echoRunner());
                    }
                });

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 20));

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.failed()).isEmpty();
        assertThat(report.completedByWorker()).containsOnlyKeys("good");
    }

    @Test
    void whenEveryWorkerStaysQuarantinedTheRunGivesUpAfterTheWaitLimitAndSaysWhy() throws Exception {
        pool.start("bad", 1, job -> {
            throw new WorkerFaultException("the model API answered HTTP 401: invalid API key");
        });
        SchedulerOptions options = fast.withWaitForWorkers(Duration.ofMillis(300))
                .withQuarantine(1, Duration.ofMinutes(1), Duration.ofMinutes(1));

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 3));

        assertThat(report.failed()).hasSize(3).allSatisfy(f -> assertThat(f.reason())
                .contains("every connected worker was quarantined").contains("invalid API key"));
    }

    @Test
    void aDispatchThatNeverReachedItsWorkerCostsNoAttempt() throws Exception {
        AtomicInteger refused = new AtomicInteger();
        WorkerHandle closing = new WorkerHandle() {
            @Override
            public String id() {
                return "closing";
            }

            @Override
            public int capacity() {
                return 4;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                refused.incrementAndGet();
                return CompletableFuture.failedFuture(new DispatchRefusedException("worker closing is closing"));
            }
        };
        pool.add(closing);
        pool.start("good", 1, TestJobs.echoRunner());

        RunReport report = new Scheduler(pool, store, fast.withMaxAttempts(1)).run(TestJobs.jobs("j", 20));

        assertThat(refused.get()).isPositive();
        assertThat(report.allCompleted()).isTrue();
        assertThat(report.failed()).isEmpty();
    }

    @Test
    void aHandleThatRefusesEverythingAndStaysInTheSourceDoesNotMakeTheRunSpin() throws Exception {
        List<Long> refusedAtNanos = new CopyOnWriteArrayList<>();
        pool.add(new WorkerHandle() {
            @Override
            public String id() {
                return "closed-but-listed";
            }

            @Override
            public int capacity() {
                return 1;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                refusedAtNanos.add(System.nanoTime());
                if (refusedAtNanos.size() == 10) {
                    pool.start("good", 1, TestJobs.echoRunner());
                }
                return CompletableFuture.failedFuture(new DispatchRefusedException("local worker is closed"));
            }
        });

        RunReport report = new Scheduler(pool, store, fast).run(TestJobs.jobs("j", 1));

        assertThat(report.allCompleted()).isTrue();
        // The only worker refuses: a few quick retries, then about one every 50 ms. Ten take
        // hundreds of milliseconds, where a spinning run takes microseconds and burns a core.
        long spanMs = TimeUnit.NANOSECONDS.toMillis(refusedAtNanos.get(9) - refusedAtNanos.get(0));
        assertThat(spanMs).isGreaterThanOrEqualTo(200);
    }

    @Test
    void interruptingARunThatIsBusyDispatchingEndsIt() throws Exception {
        AtomicInteger refused = new AtomicInteger();
        pool.add(new WorkerHandle() {
            @Override
            public String id() {
                return "refuses";
            }

            @Override
            public int capacity() {
                return 1;
            }

            @Override
            public CompletableFuture<JobOutcome> dispatch(Job job) {
                refused.incrementAndGet();
                // What an interrupted RemoteWorker.dispatch does: fail, and keep the interrupt flag set.
                Thread.currentThread().interrupt();
                return CompletableFuture.failedFuture(new DispatchRefusedException("interrupted while queueing"));
            }
        });
        Future<RunReport> run = background.submit(() -> new Scheduler(pool, store, fast).run(TestJobs.jobs("j", 3)));

        await().atMost(Duration.ofSeconds(10)).until(run::isDone);

        assertThatThrownBy(run::get).cause().isInstanceOf(InterruptedException.class);
        assertThat(refused.get()).isLessThan(5);
    }

    @Test
    void anAttemptPastItsDeadlineIsCancelledOnItsWorkerAndSentToAnother() throws Exception {
        AtomicInteger interrupts = new AtomicInteger();
        pool.start("stuck", 1, job -> {
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupts.incrementAndGet();
                throw e;
            }
            return TestJobs.echo(job);
        });
        pool.start("good", 1, TestJobs.echoRunner());
        SchedulerOptions options = fast.withJobTimeout(Duration.ofMillis(200));

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 10));

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completedByWorker()).containsOnlyKeys("good");
        assertThat(report.redeliveries()).isPositive();
        // The job the stuck worker took was interrupted there (in its own time), so its thread is free again.
        await().atMost(Duration.ofSeconds(10)).until(() -> interrupts.get() > 0);
    }

    @Test
    void deadlinesPassedInARowOnOneWorkerQuarantineIt() throws Exception {
        pool.start("stuck", 3, job -> {
            new CountDownLatch(1).await();
            return TestJobs.echo(job);
        });
        CountDownLatch quarantined = new CountDownLatch(1);
        SchedulerOptions options = fast.withJobTimeout(Duration.ofMillis(100))
                .withQuarantine(3, Duration.ofMinutes(1), Duration.ofMinutes(1))
                .withListener(new ProgressListener() {
                    @Override
                    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration d) {
                        assertThat(reason).contains("within its deadline of 100 ms");
                        quarantined.countDown();
                        pool.start("good", 1, TestJobs.echoRunner());
                    }
                });

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 6));

        assertThat(quarantined.getCount()).isZero();
        assertThat(report.allCompleted()).isTrue();
        assertThat(report.quarantined()).extracting(RunReport.Quarantined::workerId).containsExactly("stuck");
    }

    @Test
    void aWorkerThatIgnoresCancelGetsNoNewJobWhileItStillHoldsTheSlot() throws Exception {
        CountDownLatch endOfTest = new CountDownLatch(1);
        AtomicInteger deafCalls = new AtomicInteger();
        pool.start("deaf", 1, job -> {
            deafCalls.incrementAndGet();
            while (endOfTest.getCount() > 0) {
                try {
                    endOfTest.await();
                } catch (InterruptedException ignored) {
                    // A runner that will not be stopped.
                }
            }
            return TestJobs.echo(job);
        });
        pool.start("good", 1, TestJobs.echoRunner());
        SchedulerOptions options = fast.withJobTimeout(Duration.ofMillis(200))
                .withQuarantine(100, Duration.ofMinutes(1), Duration.ofMinutes(1));
        try {
            RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 30));

            assertThat(report.allCompleted()).isTrue();
            assertThat(deafCalls.get()).isEqualTo(1);
        } finally {
            endOfTest.countDown();
        }
    }

    @Test
    void workerScopedFailuresBeyondTheCapCountAsAttempts() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        pool.start("bad", 1, job -> {
            calls.incrementAndGet();
            throw new WorkerFaultException("403 from the model API");
        });
        SchedulerOptions options = fast.withMaxAttempts(2).withMaxWorkerFaults(1)
                .withQuarantine(1000, Duration.ofMinutes(1), Duration.ofMinutes(1));

        RunReport report = new Scheduler(pool, store, options).run(TestJobs.jobs("j", 1));

        assertThat(report.failed()).singleElement().satisfies(f -> {
            assertThat(f.reason()).contains("gave up after 2 attempts").contains("403 from the model API");
            assertThat(f.attempts()).isEqualTo(2);
        });
        assertThat(calls.get()).isEqualTo(3);
    }

    @Test
    void theRunStopsWithoutRecordingFailuresWhenItsWorkerSourceFails() {
        pool.start("a", 1, job -> {
            new CountDownLatch(1).await();
            return TestJobs.echo(job);
        });
        SchedulerOptions options = fast.withListener(new ProgressListener() {
            @Override
            public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                pool.fail(new IllegalStateException("selector thread died: OutOfMemoryError"));
            }
        });

        assertThatThrownBy(() -> new Scheduler(pool, store, options).run(TestJobs.jobs("j", 5)))
                .isInstanceOf(WorkerSourceFailedException.class)
                .hasMessageContaining("worker source failed: selector thread died")
                .hasMessageContaining("running the same jobs again resumes");
        List<String> failures = new ArrayList<>();
        store.forEachFailure(f -> failures.add(f.jobId().value()));
        assertThat(failures).isEmpty();
    }

    @Test
    void aBurstOfWorkerChangesQueuesOneWakeupForTheRun() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        pool.start("a", 1, job -> {
            release.await();
            return TestJobs.echo(job);
        });
        NotifyingSource source = new NotifyingSource(pool);
        AtomicInteger queuedAfterBurst = new AtomicInteger(-1);
        SchedulerRun[] run = new SchedulerRun[1];
        SchedulerOptions options = fast.withListener(new ProgressListener() {
            @Override
            public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                // On the run's own thread, so nothing is taken off the queue meanwhile.
                for (int i = 0; i < 10_000; i++) {
                    source.changed();
                }
                queuedAfterBurst.set(run[0].queuedEvents());
                release.countDown();
            }
        });
        run[0] = new SchedulerRun(source, store, options, TestJobs.jobs("j", 1), System::nanoTime);

        RunReport report = run[0].execute();

        assertThat(report.completed()).isEqualTo(1);
        assertThat(queuedAfterBurst.get()).as("events queued by 10,000 source changes").isEqualTo(1);
    }

    /** A source whose change listeners the test calls. */
    private static final class NotifyingSource implements dev.panoptes.control.WorkerSource {
        private final dev.panoptes.control.WorkerSource inner;
        private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

        NotifyingSource(dev.panoptes.control.WorkerSource inner) {
            this.inner = inner;
        }

        void changed() {
            listeners.forEach(Runnable::run);
        }

        @Override
        public List<WorkerHandle> snapshot() {
            return inner.snapshot();
        }

        @Override
        public void addListener(Runnable onChange) {
            listeners.add(onChange);
        }

        @Override
        public void removeListener(Runnable onChange) {
            listeners.remove(onChange);
        }
    }

    /** Wraps a source to record the most jobs ever outstanding on one worker at once. */
    private static final class CountingSource implements dev.panoptes.control.WorkerSource {
        final AtomicInteger maxOutstanding = new AtomicInteger();
        private final dev.panoptes.control.WorkerSource inner;
        private final Map<WorkerHandle, WorkerHandle> wrapped = new ConcurrentHashMap<>();

        CountingSource(dev.panoptes.control.WorkerSource inner) {
            this.inner = inner;
        }

        @Override
        public List<WorkerHandle> snapshot() {
            List<WorkerHandle> out = new ArrayList<>();
            for (WorkerHandle w : inner.snapshot()) {
                out.add(wrapped.computeIfAbsent(w, this::counting));
            }
            return out;
        }

        private WorkerHandle counting(WorkerHandle w) {
            AtomicInteger outstanding = new AtomicInteger();
            return new WorkerHandle() {
                @Override
                public String id() {
                    return w.id();
                }

                @Override
                public int capacity() {
                    return w.capacity();
                }

                @Override
                public CompletableFuture<JobOutcome> dispatch(Job job) {
                    maxOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
                    // Decrement before the scheduler sees the answer, as a real worker frees its slot first.
                    return w.dispatch(job).whenComplete((o, e) -> outstanding.decrementAndGet());
                }
            };
        }
    }
}

package dev.panoptes.control.schedule;

import dev.panoptes.control.HandOffBatch;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.StoredRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two host threads (as two selector loops) complete a run's futures in host batches, each a few
 * at a time, with answers, retryable failures and silence (the run's thread then cancels at the
 * deadline), while the run's own thread keeps its timers: hosted turns, queued answers and the
 * run's own rounds interleave as the threads fall. Whatever the interleaving, no worker is ever
 * given more jobs than its capacity, no job is held by two workers at once, and every job ends
 * stored exactly once.
 */
class HostedTurnStressTest {
    private static final int JOBS = 600;

    /** A worker whose futures the hosts complete; checks its capacity at each dispatch. */
    private static final class StressWorker implements WorkerHandle {
        final String id;
        final int capacity;
        final Map<CompletableFuture<JobOutcome>, Job> held = new ConcurrentHashMap<>();
        final AtomicInteger overCapacity = new AtomicInteger();

        StressWorker(String id, int capacity) {
            this.id = id;
            this.capacity = capacity;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public int capacity() {
            return capacity;
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            held.keySet().removeIf(CompletableFuture::isDone);
            if (held.size() >= capacity) {
                overCapacity.incrementAndGet();
            }
            CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
            held.put(reply, job);
            return reply;
        }
    }

    @Test
    void everyJobIsStoredOnceAndNoSlotIsOverusedWhileHostsAndTheRunInterleave() throws Exception {
        long seed = Long.getLong("panoptes.hostedStress.seed", System.nanoTime());
        List<StressWorker> workers = List.of(new StressWorker("a", 3), new StressWorker("b", 5),
                new StressWorker("c", 2));
        WorkerSet pool = new WorkerSet();
        workers.forEach(pool::add);
        List<Job> jobs = TestJobs.jobs("s", JOBS);
        InMemoryResultStore store = new InMemoryResultStore();
        Set<JobId> heldTwice = ConcurrentHashMap.newKeySet();
        AtomicReference<Thread> runThread = new AtomicReference<>();
        AtomicInteger dispatchedByRun = new AtomicInteger();
        AtomicInteger dispatchedByHosts = new AtomicInteger();
        SchedulerOptions options = SchedulerOptions.defaults()
                .withJobTimeout(Duration.ofMillis(30))
                .withMaxAttempts(1_000)
                .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .withWaitForWorkers(Duration.ofMinutes(1))
                .withPollInterval(Duration.ofMillis(20))
                .withQuarantine(3, Duration.ofMillis(5), Duration.ofMillis(20))
                .withSkipCompleted(false)
                .withListener(new ProgressListener() {
                    @Override
                    public void onDispatched(Job job, WorkerHandle worker, int attempt) {
                        (Thread.currentThread() == runThread.get() ? dispatchedByRun : dispatchedByHosts)
                                .incrementAndGet();
                        int holders = 0;
                        for (StressWorker w : workers) {
                            for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : w.held.entrySet()) {
                                if (!e.getKey().isDone() && e.getValue().id().equals(job.id())) {
                                    holders++;
                                }
                            }
                        }
                        if (holders > 0) {
                            heldTwice.add(job.id());
                        }
                    }
                });
        SchedulerRun run = new SchedulerRun(pool, store, options, jobs, System::nanoTime);
        ExecutorService threads = Executors.newFixedThreadPool(3);
        AtomicBoolean done = new AtomicBoolean();
        try {
            Future<RunReport> report = threads.submit(() -> {
                runThread.set(Thread.currentThread());
                try {
                    return run.finish(run.execute());
                } finally {
                    done.set(true);
                }
            });
            List<Future<?>> hosts = new ArrayList<>();
            for (int h = 0; h < 2; h++) {
                Random rnd = new Random(seed + h);
                hosts.add(threads.submit(() -> host(rnd, workers, done)));
            }
            RunReport finished = report.get(60, TimeUnit.SECONDS);
            for (Future<?> h : hosts) {
                h.get(10, TimeUnit.SECONDS);
            }
            assertThat(finished.completed()).as("seed %d: %s", seed, finished).isEqualTo(JOBS);
            // Both kinds of turn happened, and so did redeliveries (failures, deadlines).
            assertThat(dispatchedByHosts.get()).as("seed %d: dispatches in hosted turns", seed).isPositive();
            assertThat(dispatchedByRun.get()).as("seed %d: dispatches by the run's thread", seed).isPositive();
            assertThat(finished.redeliveries()).as("seed %d", seed).isPositive();
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            Set<String> ids = new HashSet<>();
            records.forEach(r -> ids.add(r.jobId().value()));
            assertThat(records).as("seed %d", seed).hasSize(JOBS);
            assertThat(ids).as("seed %d", seed).hasSize(JOBS);
            assertThat(heldTwice).as("seed %d: jobs sent while another worker held them", seed).isEmpty();
            for (StressWorker w : workers) {
                assertThat(w.overCapacity.get()).as("seed %d: dispatches past %s's capacity", seed, w.id).isZero();
            }
        } finally {
            threads.shutdownNow();
            assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * One host: takes a few pending futures at a time and completes them in one host batch: an
     * answer mostly, sometimes a retryable failure, sometimes nothing (the deadline's cancel comes).
     */
    private static Object host(Random rnd, List<StressWorker> workers, AtomicBoolean done) {
        while (!done.get()) {
            List<Map.Entry<CompletableFuture<JobOutcome>, Job>> picked = new ArrayList<>();
            for (StressWorker w : workers) {
                for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : w.held.entrySet()) {
                    if (!e.getKey().isDone() && rnd.nextInt(3) == 0) {
                        picked.add(e);
                    }
                }
            }
            HandOffBatch batch = HandOffBatch.openHost();
            try {
                for (Map.Entry<CompletableFuture<JobOutcome>, Job> e : picked) {
                    int fate = rnd.nextInt(20);
                    if (fate < 16) {
                        e.getKey().complete(TestJobs.echo(e.getValue()));
                    } else if (fate < 19) {
                        e.getKey().completeExceptionally(new WorkerException("stress: a transient failure"));
                    }
                    // else: left unanswered; the run's thread cancels it at its deadline.
                }
            } finally {
                batch.close();
            }
            // A selector's pace, not a spin: the run's thread needs the cores too.
            LockSupport.parkNanos(rnd.nextInt(100_000));
        }
        return null;
    }
}

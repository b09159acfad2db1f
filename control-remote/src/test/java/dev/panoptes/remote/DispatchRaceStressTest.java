package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Thousands of dispatches race with connections being killed: every future completes (with an
 * outcome or a retryable failure) and none hangs. Small queues make dispatchers block, so that
 * closes also race with callers waiting for room.
 */
class DispatchRaceStressTest {
    private static final int DISPATCHERS = 4;
    private static final int JOBS_PER_DISPATCHER = 1000;
    private static final int LIVE_WORKERS = 6;
    private static final int KILL_EVERY_DISPATCHES = 100;

    /** Answers most jobs at once, and sits on about one in forty so that kills find jobs in flight. */
    private static final FakeWorker.AssignHandler MOSTLY_ECHO = (worker, job) -> {
        if (ThreadLocalRandom.current().nextInt(40) != 0) {
            worker.answer(job);
        }
    };

    @Test
    void everyDispatchCompletesWhileConnectionsAreKilled() throws Exception {
        List<FakeWorker> live = new CopyOnWriteArrayList<>();
        AtomicInteger kills = new AtomicInteger();
        AtomicInteger generation = new AtomicInteger();
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.dispatchQueueCapacity(2))) {
            for (int i = 0; i < LIVE_WORKERS; i++) {
                live.add(FakeWorker.register(coordinator.address(), "w" + generation.incrementAndGet(), 4)
                        .serve(MOSTLY_ECHO));
            }
            eventually().until(() -> coordinator.pool.size() == LIVE_WORKERS);

            Semaphore killPermits = new Semaphore(0);
            AtomicBoolean dispatching = new AtomicBoolean(true);
            Map<Job, CompletableFuture<JobOutcome>> replies = new ConcurrentHashMap<>();
            ExecutorService threads = Executors.newFixedThreadPool(DISPATCHERS + 1);
            try {
                Future<?> killer = threads.submit(() -> {
                    Random random = new Random(1);
                    while (dispatching.get()) {
                        // Paced by dispatch progress, with a bounded wait so that it also kills
                        // while every dispatcher is blocked behind a worker sitting on jobs.
                        killPermits.tryAcquire(KILL_EVERY_DISPATCHES, 10, TimeUnit.MILLISECONDS);
                        FakeWorker victim = live.remove(random.nextInt(live.size()));
                        victim.close();
                        kills.incrementAndGet();
                        live.add(FakeWorker.register(coordinator.address(), "w" + generation.incrementAndGet(), 4)
                                .serve(MOSTLY_ECHO));
                    }
                    return null;
                });
                List<Future<?>> dispatchers = new ArrayList<>();
                for (int d = 0; d < DISPATCHERS; d++) {
                    List<Job> jobs = TestJobs.jobs("d" + d, JOBS_PER_DISPATCHER);
                    dispatchers.add(threads.submit(() -> {
                        for (Job job : jobs) {
                            replies.put(job, anyWorker(coordinator).dispatch(job));
                            killPermits.release();
                        }
                        return null;
                    }));
                }
                for (Future<?> d : dispatchers) {
                    d.get(30, TimeUnit.SECONDS);
                }
                dispatching.set(false);
                killer.get(30, TimeUnit.SECONDS);

                // Whatever the survivors still sit on fails when they go.
                for (FakeWorker f : live) {
                    f.close();
                }
                int ok = 0;
                int retryable = 0;
                for (CompletableFuture<JobOutcome> reply : replies.values()) {
                    Throwable t = reply.handle((o, e) -> e).orTimeout(15, TimeUnit.SECONDS).join();
                    if (t == null) {
                        ok++;
                    } else {
                        Throwable cause = t instanceof CompletionException ? t.getCause() : t;
                        assertThat(cause).isInstanceOf(ControlException.class);
                        assertThat(((ControlException) cause).isRetryable()).as(cause.getMessage()).isTrue();
                        retryable++;
                    }
                }
                System.out.printf("MEASURED stress: %d dispatches, %d connections killed: %d answered, %d failed"
                        + " retryably, none left hanging%n", replies.size(), kills.get(), ok, retryable);
                assertThat(replies).hasSize(DISPATCHERS * JOBS_PER_DISPATCHER);
                assertThat(ok + retryable).isEqualTo(replies.size());
                assertThat(kills.get()).isGreaterThan(10);
                assertThat(ok).isPositive();
                assertThat(retryable).isPositive();
            } finally {
                dispatching.set(false);
                threads.shutdownNow();
                for (FakeWorker f : live) {
                    f.close();
                }
            }
        }
    }

    private static WorkerHandle anyWorker(TestCoordinator coordinator) {
        while (true) {
            List<WorkerHandle> workers = coordinator.pool.snapshot();
            if (!workers.isEmpty()) {
                return workers.get(ThreadLocalRandom.current().nextInt(workers.size()));
            }
            // Between a kill and its replacement's registration; the replacement is on its way.
            Thread.onSpinWait();
        }
    }
}

package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cancels race with answers, with the selector thread assigning and dropping, and with the
 * connection closing, on real threads (issue 35, item 3): a canceller thread cancels the
 * dispatches of each round in a random order while the worker answers some at once and sits on
 * the others, and a watcher thread checks all along the promise {@link DispatchFuture} makes to
 * other threads: a cancel is counted before its claim is visible, so whoever sees a claimed
 * cancel of a job the worker still holds sees its slot counted in
 * {@link RemoteWorker#unavailableSlots()} (a callback of the cancelled future checks it too, on
 * the cancelling thread). At the end of each round: every dispatch ended exactly
 * one way (answered, cancelled by a cancel that said so, or failed retryably), and once the worker
 * let go of everything (or its connection closed) no slot is counted as held and nothing is
 * pending.
 */
class CancelRaceStressTest {
    private static final int ROUNDS = 400;
    private static final int CAPACITY = 6;
    private static final int JOBS_PER_ROUND = 10;

    @Test
    void cancelsRacingAnswersAndClosesCountEverySlotOnceAndEndEveryDispatchOneWay() throws Exception {
        Random random = new Random(35);
        AtomicInteger cancelsWon = new AtomicInteger();
        AtomicInteger cancelsLost = new AtomicInteger();
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger watches = new AtomicInteger();
        long startNs = System.nanoTime();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (TestCoordinator coordinator = TestCoordinator.start()) {
            for (int round = 0; round < ROUNDS; round++) {
                // Jobs named "sit" are held by the worker until the round lets go of them.
                Set<JobId> received = ConcurrentHashMap.newKeySet();
                Set<JobId> answeredOnce = ConcurrentHashMap.newKeySet();
                AtomicBoolean letGo = new AtomicBoolean();
                Object sending = new Object();
                FakeWorker fake = FakeWorker.register(coordinator.address(), "r" + round, CAPACITY)
                        .serve((worker, job) -> {
                            received.add(job.id());
                            if ((!isSit(job) || letGo.get()) && answeredOnce.add(job.id())) {
                                synchronized (sending) {
                                    worker.answer(job);
                                }
                            }
                        });
                try {
                    RemoteWorker worker = coordinator.awaitWorker(fake);
                    List<Job> jobs = new ArrayList<>();
                    List<DispatchFuture> replies = new ArrayList<>();
                    for (int j = 0; j < JOBS_PER_ROUND; j++) {
                        Job job = TestJobs.job("r" + round + "-" + j + (random.nextBoolean() ? "-sit" : ""), "p");
                        jobs.add(job);
                        replies.add((DispatchFuture) worker.dispatch(job));
                    }
                    List<Integer> order = new ArrayList<>();
                    for (int j = 0; j < JOBS_PER_ROUND; j++) {
                        order.add(j);
                    }
                    Collections.shuffle(order, random);
                    boolean closeMidway = random.nextInt(3) == 0;
                    AtomicReference<String> broken = new AtomicReference<>();
                    AtomicBoolean held = new AtomicBoolean(!closeMidway);
                    for (int j = 0; j < JOBS_PER_ROUND; j++) {
                        Job job = jobs.get(j);
                        DispatchFuture reply = replies.get(j);
                        // Runs on the cancelling thread, inside cancel: it sees the future cancelled, so
                        // it must see the slot counted while the worker still holds the job.
                        reply.whenComplete((o, e) -> {
                            if (reply.isCancelled() && held.get() && isSit(job) && received.contains(job.id())
                                    && worker.unavailableSlots() < 1) {
                                broken.compareAndSet(null, "job " + job.id() + " is cancelled and held by the worker,"
                                        + " but no slot is counted as held");
                            }
                        });
                    }
                    int cancels = random.nextInt(JOBS_PER_ROUND + 1);

                    AtomicBoolean watching = new AtomicBoolean(true);
                    CountDownLatch go = new CountDownLatch(1);
                    Future<?> watcher = threads.submit(() -> {
                        go.await();
                        while (watching.get()) {
                            // Claims first, then the count: the count may only be ahead.
                            int claimedAndHeld = 0;
                            for (int j = 0; j < JOBS_PER_ROUND; j++) {
                                if (replies.get(j).cancelClaimed() && isSit(jobs.get(j))
                                        && received.contains(jobs.get(j).id())) {
                                    claimedAndHeld++;
                                }
                            }
                            int counted = worker.unavailableSlots();
                            watches.incrementAndGet();
                            if (counted < claimedAndHeld) {
                                broken.compareAndSet(null, claimedAndHeld + " cancelled jobs the worker holds, but "
                                        + counted + " slots counted as held");
                            }
                        }
                        return null;
                    });
                    boolean[] cancelled = new boolean[JOBS_PER_ROUND];
                    Future<?> canceller = threads.submit(() -> {
                        go.await();
                        for (int k = 0; k < cancels; k++) {
                            int j = order.get(k);
                            cancelled[j] = replies.get(j).cancel(true);
                        }
                        return null;
                    });
                    go.countDown();
                    if (closeMidway) {
                        // The close races with the cancels: the watcher's promise holds only while the
                        // worker still holds its jobs, so it stops first.
                        watching.set(false);
                        watcher.get(10, TimeUnit.SECONDS);
                        fake.close();
                    }
                    canceller.get(10, TimeUnit.SECONDS);
                    watching.set(false);
                    watcher.get(10, TimeUnit.SECONDS);
                    assertThat(broken.get()).as("round %d", round).isNull();

                    if (!closeMidway) {
                        // The worker lets go of what it sat on, cancelled or not, and answers at once
                        // whatever it is sent from now on.
                        held.set(false);
                        letGo.set(true);
                        for (Job job : jobs) {
                            if (received.contains(job.id()) && answeredOnce.add(job.id())) {
                                synchronized (sending) {
                                    fake.answer(job);
                                }
                            }
                        }
                    }
                    for (int j = 0; j < JOBS_PER_ROUND; j++) {
                        DispatchFuture reply = replies.get(j);
                        Throwable t = reply.handle((o, e) -> e).orTimeout(10, TimeUnit.SECONDS).join();
                        if (cancelled[j]) {
                            assertThat(reply).as("a cancel that won, round %d job %d", round, j).isCancelled();
                            cancelsWon.incrementAndGet();
                            continue;
                        }
                        if (order.indexOf(j) < cancels) {
                            cancelsLost.incrementAndGet();
                        }
                        assertThat(reply.isCancelled()).as("cancelled without a cancel saying so, round %d job %d",
                                round, j).isFalse();
                        if (t == null) {
                            assertThat(reply.join()).isEqualTo(TestJobs.echo(jobs.get(j)));
                            answered.incrementAndGet();
                        } else {
                            Throwable cause = t instanceof CompletionException ? t.getCause() : t;
                            assertThat(cause).isInstanceOf(ControlException.class);
                            assertThat(((ControlException) cause).isRetryable()).as(cause.getMessage()).isTrue();
                            failed.incrementAndGet();
                        }
                    }
                    int r = round;
                    eventually().untilAsserted(() -> assertThat(worker.unavailableSlots() + " held, "
                            + worker.pendingCount() + " pending").as("round %d, after everything was let go", r)
                            .isEqualTo("0 held, 0 pending"));
                } finally {
                    fake.close();
                }
            }
        } finally {
            threads.shutdownNow();
        }
        double seconds = (System.nanoTime() - startNs) / 1e9;
        System.out.printf("MEASURED cancel races: %d rounds in %.2f s: %d cancels won, %d lost to an answer or a"
                + " close, %d answered, %d failed retryably, %d watches of the slot count%n", ROUNDS, seconds,
                cancelsWon.get(), cancelsLost.get(), answered.get(), failed.get(), watches.get());
        assertThat(cancelsWon.get()).isPositive();
        assertThat(cancelsLost.get()).isPositive();
        assertThat(answered.get()).isPositive();
        assertThat(failed.get()).isPositive();
    }

    private static boolean isSit(Job job) {
        return job.id().value().contains("sit");
    }
}

package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.wire.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Jobs over real loopback sockets to scripted fake workers: the happy path and PROTOCOL.md's rules. */
class RemoteDispatchTest {
    private TestCoordinator coordinator;
    private final List<FakeWorker> fakes = new ArrayList<>();

    @BeforeEach
    void startCoordinator() throws IOException {
        coordinator = TestCoordinator.start(b -> b.dispatchQueueCapacity(4));
    }

    @AfterEach
    void stopEverything() throws IOException {
        for (FakeWorker f : fakes) {
            f.close();
        }
        coordinator.close();
    }

    private FakeWorker fake(String id, int capacity) throws IOException {
        FakeWorker f = FakeWorker.register(coordinator.address(), id, capacity);
        fakes.add(f);
        return f;
    }

    private static ControlException failureOf(CompletableFuture<JobOutcome> future) {
        Throwable t = future.handle((ok, error) -> error).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(t).as("the future should have failed, but completed normally").isNotNull();
        if (t instanceof CompletionException) {
            t = t.getCause();
        }
        assertThat(t).isInstanceOf(ControlException.class);
        return (ControlException) t;
    }

    private static JobOutcome outcomeOf(CompletableFuture<JobOutcome> future) {
        return future.orTimeout(10, TimeUnit.SECONDS).join();
    }

    @Test
    void remoteWorkerDispatchesOverTheWire() throws IOException {
        fake("w1", 2).serve(FakeWorker.ECHO);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        assertThat(worker.capacity()).isEqualTo(2);

        JobOutcome outcome = outcomeOf(worker.dispatch(TestJobs.job("j1", "hello")));

        assertThat(outcome.jobId()).isEqualTo(JobId.of("j1"));
        assertThat(outcome.records()).containsExactly(new ResponseRecord("v0", "re: hello"));
        assertThat(coordinator.registered).containsExactly(worker);
    }

    @Test
    void workerDeathMakesDispatchRetryable() throws IOException {
        FakeWorker fake = fake("w1", 1);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j1", "hello"));
        assertThat(fake.nextAssign().id()).isEqualTo(JobId.of("j1"));

        fake.close();

        ControlException failure = failureOf(reply);
        assertThat(failure.isRetryable()).isTrue();
        assertThat(failure).isInstanceOf(WorkerException.class)
                .hasMessageContaining("worker connection lost").hasMessageContaining("w1").hasMessageContaining("j1");
        eventually().until(coordinator.pool::isEmpty);
        // The pool changes on the selector thread, the listener hears of it later on the events thread.
        eventually().until(() -> !coordinator.lost.isEmpty());
        assertThat(coordinator.lost).containsExactly(worker);
        assertThat(worker.isOpen()).isFalse();
    }

    @Test
    void answersArrivingOutOfOrderReachTheirOwnWaiters() throws IOException {
        FakeWorker fake = fake("w1", 3);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        Job a = TestJobs.job("a", "alpha");
        Job b = TestJobs.job("b", "beta");
        Job c = TestJobs.job("c", "gamma");
        CompletableFuture<JobOutcome> fa = worker.dispatch(a);
        CompletableFuture<JobOutcome> fb = worker.dispatch(b);
        CompletableFuture<JobOutcome> fc = worker.dispatch(c);
        List<Job> received = List.of(fake.nextAssign(), fake.nextAssign(), fake.nextAssign());
        assertThat(received).containsExactlyInAnyOrder(a, b, c);

        fake.answer(c);
        fake.answer(a);
        fake.answer(b);

        assertThat(outcomeOf(fa).records()).containsExactly(new ResponseRecord("v0", "re: alpha"));
        assertThat(outcomeOf(fb).records()).containsExactly(new ResponseRecord("v0", "re: beta"));
        assertThat(outcomeOf(fc).records()).containsExactly(new ResponseRecord("v0", "re: gamma"));
    }

    @Test
    void theWorkerNeverSeesMoreThanCapacityAssignsOutstanding() throws IOException {
        try (TestCoordinator quick = TestCoordinator.start(b -> b.dispatchQueueCapacity(4)
                .heartbeatInterval(Duration.ofMillis(20)))) {
            // Holds every assign until the coordinator falls quiet (its heartbeat says it has sent
            // all it meant to), then answers them in reverse order. A coordinator ignoring the
            // capacity would have sent more by then.
            List<Job> held = new ArrayList<>();
            FakeWorker fake = FakeWorker.register(quick.address(), "w1", 3);
            fakes.add(fake);
            fake.serveMessages((w, m) -> {
                if (m instanceof Message.Assign assign) {
                    held.add(assign.job());
                } else if (m instanceof Message.Heartbeat && !held.isEmpty()) {
                    Collections.reverse(held);
                    for (Job j : held) {
                        w.answer(j);
                    }
                    held.clear();
                }
            });
            RemoteWorker worker = quick.awaitWorker("w1");
            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            ExecutorService dispatcher = Executors.newSingleThreadExecutor();
            try {
                // Many more than capacity + queue (3 + 4): dispatch blocks in between, on its own thread.
                Future<?> dispatching = dispatcher.submit(() -> {
                    for (Job job : TestJobs.jobs("many", 60)) {
                        replies.add(worker.dispatch(job));
                    }
                });
                eventually().until(dispatching::isDone);
            } finally {
                dispatcher.shutdownNow();
            }

            for (CompletableFuture<JobOutcome> reply : replies) {
                outcomeOf(reply);
            }
            assertThat(fake.assigned()).hasSize(60);
            assertThat(fake.maxOutstanding()).isEqualTo(3);
        }
    }

    private static final String BLOCKED_DISPATCHER = "test-dispatcher-that-blocks";

    @Test
    void dispatchBlocksWhileTheQueueIsFullAndResumesWhenAnswersFreeSlots() throws Exception {
        FakeWorker fake = fake("w1", 2);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        // Capacity 2 on the wire plus 4 in the queue fit; the seventh dispatch must wait.
        List<Job> jobs = TestJobs.jobs("q", 7);
        List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
        for (Job job : jobs.subList(0, 2)) {
            replies.add(worker.dispatch(job));
        }
        Job first = fake.nextAssign();
        Job second = fake.nextAssign();
        for (Job job : jobs.subList(2, 6)) {
            replies.add(worker.dispatch(job));
        }
        eventually().until(() -> worker.queuedCount() == 4);

        ExecutorService dispatcher = Executors.newSingleThreadExecutor(r -> new Thread(r, BLOCKED_DISPATCHER));
        try {
            Future<CompletableFuture<JobOutcome>> seventh = dispatcher.submit(() -> worker.dispatch(jobs.get(6)));
            eventually().until(() -> TestCoordinator.isBlockedInDispatch(BLOCKED_DISPATCHER));
            assertThat(seventh).isNotDone();

            fake.answer(first);

            CompletableFuture<JobOutcome> reply = seventh.get(10, TimeUnit.SECONDS);
            replies.add(reply);
            eventually().until(() -> worker.queuedCount() == 4 && worker.pendingCount() == 2);
        } finally {
            dispatcher.shutdownNow();
        }
        // Serve the rest so that every future ends well.
        fake.answer(second);
        for (int left = 5; left > 0; left--) {
            fake.answer(fake.nextAssign());
        }
        for (CompletableFuture<JobOutcome> reply : replies) {
            outcomeOf(reply);
        }
        assertThat(fake.maxOutstanding()).isEqualTo(2);
    }

    @Test
    void failedFramesFailTheJobRetryablyOrNotAsTheWorkerSays() throws IOException {
        FakeWorker fake = fake("w1", 2);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        CompletableFuture<JobOutcome> retry = worker.dispatch(TestJobs.job("r", "p"));
        CompletableFuture<JobOutcome> fatal = worker.dispatch(TestJobs.job("f", "p"));
        fake.nextAssign();
        fake.nextAssign();

        fake.fail(JobId.of("r"), "model API answered 503 until we gave up", true);
        fake.fail(JobId.of("f"), "model API answered 400: bad request", false);

        ControlException retryable = failureOf(retry);
        assertThat(retryable).isInstanceOf(WorkerException.class)
                .hasMessageContaining("w1").hasMessageContaining("r").hasMessageContaining("503 until we gave up");
        assertThat(retryable.isRetryable()).isTrue();
        ControlException notRetryable = failureOf(fatal);
        assertThat(notRetryable).isInstanceOf(JobFailedException.class)
                .hasMessageContaining("w1").hasMessageContaining("job f").hasMessageContaining("400: bad request");
        assertThat(notRetryable.isRetryable()).isFalse();
        assertThat(worker.isOpen()).isTrue();
    }

    @Test
    void aResultThatDoesNotAnswerItsJobFailsItRetryablyNamingTheWorker() throws IOException {
        FakeWorker fake = fake("w1", 1);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j1", "one", "two"));
        fake.nextAssign();

        // One record for a two-vignette job.
        fake.answer(new JobOutcome(JobId.of("j1"), List.of(new ResponseRecord("v0", "only one"))));

        ControlException failure = failureOf(reply);
        assertThat(failure.isRetryable()).isTrue();
        assertThat(failure).hasMessageContaining("w1").hasMessageContaining("j1").hasMessageContaining("missing");
        // The connection itself stays: the next job goes through.
        fake.serve(FakeWorker.ECHO);
        assertThat(outcomeOf(worker.dispatch(TestJobs.job("j2", "x"))).records()).hasSize(1);
    }

    @Test
    void lateDuplicateAndUnknownAnswersAreIgnored() throws IOException {
        FakeWorker fake = fake("w1", 1);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        Job job = TestJobs.job("j1", "p");
        CompletableFuture<JobOutcome> reply = worker.dispatch(job);
        fake.nextAssign();
        fake.answer(job);
        outcomeOf(reply);

        fake.answer(job); // duplicate
        fake.answer(TestJobs.job("never-assigned", "p")); // unknown
        fake.fail(JobId.of("also-unknown"), "boom", false);

        fake.serve(FakeWorker.ECHO);
        assertThat(outcomeOf(worker.dispatch(TestJobs.job("j2", "q"))).jobId()).isEqualTo(JobId.of("j2"));
        assertThat(worker.isOpen()).isTrue();
        assertThat(coordinator.lost).isEmpty();
    }

    @Test
    void slipsAndUnknownMessageTypesAreIgnored() throws IOException {
        FakeWorker fake = fake("w1", 1);
        RemoteWorker worker = coordinator.awaitWorker("w1");

        fake.send(new Message.Register("w1", 5));
        fake.send(new Message.Assign(TestJobs.job("from-worker", "p")));
        fake.sendRaw(FakeWorker.frame("{\"type\":\"gossip\",\"news\":1}"));
        fake.serve(FakeWorker.ECHO);

        assertThat(outcomeOf(worker.dispatch(TestJobs.job("j1", "p"))).jobId()).isEqualTo(JobId.of("j1"));
        assertThat(worker.capacity()).isEqualTo(1);
        assertThat(coordinator.pool.snapshot()).containsExactly(worker);
    }

    @Test
    void dispatchingAJobIdAlreadyPendingFailsThatDispatchAndLeavesTheFirstIntact() throws IOException {
        FakeWorker fake = fake("w1", 2);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        Job job = TestJobs.job("same", "p");
        CompletableFuture<JobOutcome> first = worker.dispatch(job);
        assertThat(fake.nextAssign()).isEqualTo(job);

        CompletableFuture<JobOutcome> second = worker.dispatch(job);

        ControlException failure = failureOf(second);
        assertThat(failure).hasMessageContaining("already pending").hasMessageContaining("same")
                .hasMessageContaining("w1");
        assertThat(first).isNotDone();
        fake.answer(job);
        assertThat(outcomeOf(first).jobId()).isEqualTo(JobId.of("same"));
        assertThat(fake.assigned()).hasSize(1);
    }

    @Test
    void twoConnectionsWithTheSameWorkerIdAreTwoMembersAndOneEndingLeavesTheOther() throws IOException {
        FakeWorker one = fake("twin", 1).serve(FakeWorker.ECHO);
        FakeWorker two = fake("twin", 1).serve(FakeWorker.ECHO);
        RemoteWorker first = coordinator.awaitWorker(one);
        RemoteWorker second = coordinator.awaitWorker(two);
        assertThat(first).isNotSameAs(second);

        one.close();

        eventually().until(() -> coordinator.pool.size() == 1);
        assertThat(coordinator.pool.snapshot()).containsExactly(second);
        eventually().until(() -> !coordinator.lost.isEmpty());
        assertThat(coordinator.lost).containsExactly(first);
        assertThat(outcomeOf(second.dispatch(TestJobs.job("j1", "p"))).jobId()).isEqualTo(JobId.of("j1"));
    }

    @Test
    void aDrainingWorkerLeavesThePoolTakesNoNewJobsAndStillAnswersItsOwn() throws IOException {
        FakeWorker fake = fake("w1", 2);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        Job held = TestJobs.job("held", "p");
        CompletableFuture<JobOutcome> reply = worker.dispatch(held);
        fake.nextAssign();

        fake.send(new Message.Drain());

        eventually().until(coordinator.pool::isEmpty);
        assertThat(worker.isDraining()).isTrue();
        ControlException refused = failureOf(worker.dispatch(TestJobs.job("late", "p")));
        assertThat(refused.isRetryable()).isTrue();
        assertThat(refused).hasMessageContaining("draining");
        fake.answer(held);
        assertThat(outcomeOf(reply).jobId()).isEqualTo(JobId.of("held"));
    }

    @Test
    void dispatchToAWorkerWhoseConnectionIsGoneFailsAtOnceAndRetryably() throws IOException {
        FakeWorker fake = fake("w1", 1);
        RemoteWorker worker = coordinator.awaitWorker("w1");
        fake.close();
        eventually().until(() -> !worker.isOpen());

        CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j1", "p"));

        assertThat(reply).isCompletedExceptionally();
        assertThat(failureOf(reply).isRetryable()).isTrue();
        assertThatThrownBy(() -> worker.dispatch(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void theWorkerIsToldTheHeartbeatIntervalAndTheFrameLimitWhenItRegisters() throws IOException {
        FakeWorker fake = fake("w1", 1);
        Message first = fake.recv().orElseThrow();
        assertThat(first).isEqualTo(new Message.Registered(Duration.ofMillis(200).toMillis(),
                (long) ServerOptions.defaults().maxFrameBytes()));
    }

    @Test
    void withDirectCompletionsCallbacksRunOnTheSelectorThreadAndCanDispatchTheNextJob() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.directCompletions(true));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 1)) {
            fake.serve(FakeWorker.ECHO);
            RemoteWorker worker = coordinator.awaitWorker("w1");
            List<String> threads = new CopyOnWriteArrayList<>();
            CompletableFuture<Integer> chainDone = new CompletableFuture<>();
            // One job at a time, each dispatched from the previous one's callback, as a driver at K=1 does.
            IntConsumer[] next = new IntConsumer[1];
            next[0] = n -> worker.dispatch(TestJobs.job("chain-" + n, "p")).whenComplete((outcome, error) -> {
                threads.add(Thread.currentThread().getName());
                if (error != null) {
                    chainDone.completeExceptionally(error);
                } else if (n == 99) {
                    chainDone.complete(n + 1);
                } else {
                    next[0].accept(n + 1);
                }
            });

            next[0].accept(0);

            assertThat(chainDone.get(10, TimeUnit.SECONDS)).isEqualTo(100);
            // A callback runs on this thread when the answer beat whenComplete (this thread was
            // descheduled meanwhile, on a loaded machine); once one runs on the selector thread, every
            // later one is attached there, before its job is sent, and so runs there too.
            assertThat(threads).hasSize(100);
            String io = coordinator.server.threadNamePrefix() + "io-";
            int firstOnLoop = 0;
            while (firstOnLoop < threads.size() && !threads.get(firstOnLoop).startsWith(io)) {
                firstOnLoop++;
            }
            assertThat(firstOnLoop).as("some callback ran on the selector thread: %s", threads).isLessThan(100);
            assertThat(threads.subList(firstOnLoop, 100)).allSatisfy(name -> assertThat(name).startsWith(io));
        }
    }
}

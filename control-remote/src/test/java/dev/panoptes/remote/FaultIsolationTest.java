package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.wire.Message;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Whatever goes wrong with one job, one worker or one piece of user code stays with it: the
 * cases of "one bad worker, one bad job or one stuck peer never hurts the rest of the run", at
 * the level of the coordinator library.
 */
class FaultIsolationTest {

    // ---------------------------------------------------------------- one bad job

    @Test
    void aJobThatCannotBeEncodedFailsAloneAndTheConnectionGoesOn() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.selectorThreads(1));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 4)) {
            fake.serve(FakeWorker.ECHO);
            RemoteWorker worker = coordinator.awaitWorker("w1");
            CompletableFuture<JobOutcome> before = worker.dispatch(TestJobs.job("before", "p"));

            CompletableFuture<JobOutcome> bad = worker.dispatch(jobWithMetadata("bad", Map.of("when", Instant.EPOCH)));
            CompletableFuture<JobOutcome> after = worker.dispatch(TestJobs.job("after", "p"));

            assertThat(failureOf(bad)).isInstanceOf(JobFailedException.class)
                    .hasMessageContaining("job bad").hasMessageContaining("vignette 'v0'")
                    .hasMessageContaining("metadata.when");
            assertThat(before.get(10, TimeUnit.SECONDS).jobId().value()).isEqualTo("before");
            assertThat(after.get(10, TimeUnit.SECONDS).jobId().value()).isEqualTo("after");
            assertThat(worker.isOpen()).isTrue();
            assertThat(fake.assigned()).extracting(j -> j.id().value()).containsExactly("before", "after");
        }
    }

    @Test
    void aRunWithOneUnencodableJobStoresEveryOtherJobAndFailsThatOneNamingTheField() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.selectorThreads(1));
             FakeWorker a = FakeWorker.register(coordinator.address(), "a", 2);
             FakeWorker b = FakeWorker.register(coordinator.address(), "b", 2)) {
            a.serve(FakeWorker.ECHO);
            b.serve(FakeWorker.ECHO);
            coordinator.awaitWorker("a");
            coordinator.awaitWorker("b");
            List<Job> jobs = new ArrayList<>(TestJobs.jobs("j", 40));
            jobs.add(20, jobWithMetadata("poison", Map.of("cycle", new Object() {
                @Override
                public String toString() {
                    return "not JSON";
                }
            })));
            InMemoryResultStore store = new InMemoryResultStore();

            RunReport report = new Scheduler(coordinator.pool, store, SchedulerOptions.defaults()).run(jobs);

            assertThat(report.completed()).isEqualTo(40);
            assertThat(report.failed()).singleElement().satisfies(f -> {
                assertThat(f.jobId().value()).isEqualTo("poison");
                assertThat(f.attempts()).isEqualTo(1);
                assertThat(f.reason()).contains("vignette 'v0'").contains("metadata.cycle");
            });
            assertThat(coordinator.lost).isEmpty();
        }
    }

    // ---------------------------------------------------------------- user code and dying loops

    @Test
    void anErrorThrownByUserCodeOnASelectorThreadClosesOnlyThatConnection() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.selectorThreads(1))) {
            AtomicBoolean thrown = new AtomicBoolean();
            coordinator.pool.addListener(() -> {
                if (thrown.compareAndSet(false, true)) {
                    throw new StackOverflowError("a pool listener recursed");
                }
            });
            try (FakeWorker first = FakeWorker.register(coordinator.address(), "first", 1)) {
                assertThat(first.readUntilClosed()).isEmpty();
            }
            try (FakeWorker second = FakeWorker.register(coordinator.address(), "second", 1)) {
                second.serve(FakeWorker.ECHO);
                RemoteWorker worker = coordinator.awaitWorker("second");
                assertThat(worker.dispatch(TestJobs.job("j", "p")).get(10, TimeUnit.SECONDS).records()).hasSize(1);
            }
            assertThat(coordinator.server.failure()).isNull();
        }
    }

    @Test
    void aSelectorThreadThatDiesClosesTheServerReleasesItsPortAndStopsTheRun() throws Exception {
        AtomicReference<Throwable> told = new AtomicReference<>();
        SharedPool pool = new SharedPool();
        WorkerServer server = WorkerServer.start(ServerOptions.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .selectorThreads(1).build(), pool, new WorkerServer.Listener() {
                    @Override
                    public void onFailed(Throwable cause) {
                        told.set(cause);
                    }
                });
        int port = server.address().getPort();
        ExecutorService runner = Executors.newSingleThreadExecutor();
        try (FakeWorker fake = FakeWorker.register(server.address(), "w1", 2)) {
            eventually().until(() -> pool.size() == 1);
            CountDownLatch dispatched = new CountDownLatch(2);
            SchedulerOptions options = SchedulerOptions.defaults().withListener(
                    new dev.panoptes.control.schedule.ProgressListener() {
                        @Override
                        public void onDispatched(Job job, dev.panoptes.control.WorkerHandle worker, int attempt) {
                            dispatched.countDown();
                        }
                    });
            InMemoryResultStore store = new InMemoryResultStore();
            Future<RunReport> run = runner.submit(() -> new Scheduler(pool, store, options).run(TestJobs.jobs("j", 5)));
            assertThat(dispatched.await(10, TimeUnit.SECONDS)).isTrue();

            server.loop(0).execute(() -> {
                throw new OutOfMemoryError("injected: the selector thread ran out of heap");
            });

            assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(WorkerSourceFailedException.class)
                    .hasMessageContaining("the worker server on").hasMessageContaining("injected");
            eventually().until(() -> told.get() != null);
            assertThat(told.get()).hasMessageContaining("injected");
            assertThat(server.failure()).isSameAs(told.get());
            assertThat(fake.readUntilClosed()).isEmpty();
            List<String> failures = new ArrayList<>();
            store.forEachFailure(f -> failures.add(f.jobId().value()));
            assertThat(failures).as("nothing is recorded as failed: a rerun resumes").isEmpty();
            eventually().untilAsserted(() -> {
                try (ServerSocket again = new ServerSocket()) {
                    again.bind(new InetSocketAddress("127.0.0.1", port));
                }
            });
        } finally {
            runner.shutdownNow();
            server.close();
        }
    }

    // ---------------------------------------------------------------- failure scopes on the wire

    @Test
    void aFailedFrameSaysWhoseFailureItIs() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 4)) {
            RemoteWorker worker = coordinator.awaitWorker("w1");
            CompletableFuture<JobOutcome> job = worker.dispatch(TestJobs.job("a", "p"));
            CompletableFuture<JobOutcome> own = worker.dispatch(TestJobs.job("b", "p"));
            CompletableFuture<JobOutcome> moment = worker.dispatch(TestJobs.job("c", "p"));
            CompletableFuture<JobOutcome> old = worker.dispatch(TestJobs.job("d", "p"));
            for (int i = 0; i < 4; i++) {
                fake.nextAssign();
            }

            fake.fail(JobId.of("a"), "HTTP 400: prompt too long", FailureScope.JOB);
            fake.fail(JobId.of("b"), "HTTP 404 for model 'llama'", FailureScope.WORKER);
            fake.fail(JobId.of("c"), "HTTP 503", FailureScope.TRANSIENT);
            fake.fail(JobId.of("d"), "an old worker's failure", true);

            assertThat(failureOf(job)).isInstanceOf(JobFailedException.class).hasMessageContaining("prompt too long");
            assertThat(failureOf(own)).isInstanceOf(WorkerFaultException.class)
                    .hasMessageStartingWith("worker w1 at ").hasMessageContaining(": HTTP 404 for model 'llama'");
            assertThat(failureOf(moment)).isExactlyInstanceOf(WorkerException.class);
            assertThat(failureOf(old).scope()).isEqualTo(FailureScope.TRANSIENT);
        }
    }

    // ---------------------------------------------------------------- half-alive workers

    @Test
    void aCancelledJobIsCancelledOnTheWorkerAndKeepsItsSlotUntilTheWorkerLetsGo() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 1)) {
            RemoteWorker worker = coordinator.awaitWorker("w1");
            CompletableFuture<JobOutcome> slow = worker.dispatch(TestJobs.job("slow", "p"));
            fake.nextAssign();

            assertThat(slow.cancel(true)).isTrue();

            Message cancel = fake.nextInteresting();
            assertThat(cancel).isEqualTo(new Message.Cancel(JobId.of("slow"), "its attempt was cancelled by the"
                    + " coordinator (deadline passed)"));
            assertThat(worker.unavailableSlots()).isEqualTo(1);
            CompletableFuture<JobOutcome> next = worker.dispatch(TestJobs.job("next", "p"));
            eventually().until(() -> worker.queuedCount() == 1);
            assertThat(worker.pendingCount()).isZero();

            fake.fail(JobId.of("slow"), "cancelled by the coordinator", FailureScope.TRANSIENT);

            // The slot is free again: the queued job goes out.
            assertThat(fake.nextAssign().id().value()).isEqualTo("next");
            eventually().until(() -> worker.unavailableSlots() == 0);
            fake.answer(TestJobs.job("next", "p"));
            assertThat(next.get(10, TimeUnit.SECONDS).jobId().value()).isEqualTo("next");
        }
    }

    @Test
    void aWorkerThatNeverLetsGoOfACancelledJobIsDisconnected() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.heartbeatInterval(Duration.ofMillis(100))
                .heartbeatTimeout(Duration.ofMillis(600)));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "deaf", 2)) {
            fake.heartbeatEvery(50);
            RemoteWorker worker = coordinator.awaitWorker("deaf");
            CompletableFuture<JobOutcome> cancelled = worker.dispatch(TestJobs.job("stuck", "p"));
            CompletableFuture<JobOutcome> other = worker.dispatch(TestJobs.job("other", "p"));
            eventually().until(() -> worker.pendingCount() == 2);

            cancelled.cancel(true);

            eventually().until(() -> !coordinator.lost.isEmpty());
            assertThat(coordinator.lostCauses.get(0)).hasMessageContaining("did not answer job stuck")
                    .hasMessageContaining("of the coordinator's cancel");
            assertThat(failureOf(other)).hasMessageContaining("worker connection lost");
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @Test
    void aWorkerThatHeartbeatsButStopsReadingIsReapedAfterTheWriteStallTimeout() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.heartbeatInterval(Duration.ofMillis(100))
                .heartbeatTimeout(Duration.ofSeconds(30)).writeStallTimeout(Duration.ofMillis(500)));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "deaf", 64)) {
            fake.heartbeatEvery(50);
            RemoteWorker worker = coordinator.awaitWorker("deaf");
            // 64 jobs of 256 KiB: far more than loopback buffers hold, for a worker that never reads.
            String big = "x".repeat(256 * 1024);
            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                replies.add(worker.dispatch(TestJobs.job("big-" + i, big)));
            }

            eventually().until(() -> !coordinator.lost.isEmpty());

            assertThat(coordinator.lostCauses.get(0)).hasMessageContaining("deaf").hasMessageContaining("stopped reading")
                    .hasMessageContaining("write-stall timeout 500 ms");
            for (CompletableFuture<JobOutcome> reply : replies) {
                assertThat(failureOf(reply).isRetryable()).isTrue();
            }
        }
    }

    @Test
    void aLargeResultArrivingSlowlyKeepsItsWorkerAliveAcrossTheHeartbeatTimeout() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.heartbeatInterval(Duration.ofMillis(100))
                .heartbeatTimeout(Duration.ofMillis(400)));
             FakeWorker fake = FakeWorker.register(coordinator.address(), "slow-link", 1)) {
            RemoteWorker worker = coordinator.awaitWorker("slow-link");
            Job job = TestJobs.job("big", "p");
            CompletableFuture<JobOutcome> reply = worker.dispatch(job);
            fake.nextAssign();
            JobOutcome outcome = new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "y".repeat(64 * 1024))));
            byte[] frame = new dev.panoptes.control.wire.MessageCodec().encodeFrame(new Message.Result(outcome));

            // One frame over about a second, far longer than the 400 ms heartbeat timeout, with no
            // frame of any kind in between: only the bytes say the worker lives.
            OutputStream out = fake.socket().getOutputStream();
            int chunk = frame.length / 20 + 1;
            AtomicInteger sent = new AtomicInteger();
            ScheduledExecutorService link = Executors.newSingleThreadScheduledExecutor();
            try {
                link.scheduleAtFixedRate(() -> {
                    int at = sent.get();
                    if (at >= frame.length) {
                        return;
                    }
                    int n = Math.min(chunk, frame.length - at);
                    try {
                        out.write(frame, at, n);
                        out.flush();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    sent.addAndGet(n);
                }, 0, 50, TimeUnit.MILLISECONDS);

                assertThat(reply.get(10, TimeUnit.SECONDS).records().get(0).response()).hasSize(64 * 1024);
            } finally {
                link.shutdownNow();
            }
            assertThat(coordinator.lost).isEmpty();
        }
    }

    // ---------------------------------------------------------------- the handshake

    @Test
    void beforeRegisteringAPeerMayNotSendABigFrame() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker peer = FakeWorker.connect(coordinator.address())) {
            peer.sendRaw(ByteBuffer.allocate(4).putInt(100_000).array());

            assertThat(peer.readUntilClosed()).hasValueSatisfying(reason -> assertThat(reason)
                    .contains("frame length 100000 exceeds the limit of 65536"));
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @Test
    void afterRegisteringAWorkerMaySendFramesUpToTheFullLimit() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start();
             FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 1)) {
            RemoteWorker worker = coordinator.awaitWorker("w1");
            Job job = TestJobs.job("j", "p");
            CompletableFuture<JobOutcome> reply = worker.dispatch(job);
            fake.nextAssign();
            fake.answer(new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "z".repeat(200_000)))));
            assertThat(reply.get(10, TimeUnit.SECONDS).records().get(0).response()).hasSize(200_000);
        }
    }

    @Test
    void aRejectionThatOnlyTheOperatorCanFixSaysSoAndAHandshakeTimeoutDoesNot() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.token("s3cret")
                .handshakeTimeout(Duration.ofMillis(200)))) {
            try (FakeWorker wrong = FakeWorker.register(coordinator.address(),
                    new Message.Register("w1", 1, Message.PROTOCOL_VERSION, "guess", Map.of()))) {
                Message m = wrong.nextInteresting();
                assertThat(m).isInstanceOf(Message.Rejected.class);
                assertThat(((Message.Rejected) m).retryable()).isFalse();
            }
            try (FakeWorker silent = FakeWorker.connect(coordinator.address())) {
                Message m = silent.nextInteresting();
                assertThat(((Message.Rejected) m).retryable()).isTrue();
            }
        }
    }

    // ---------------------------------------------------------------- a closing worker

    @Test
    void aDispatchToAWorkerThatIsGoneIsRefusedAsNeverSent() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start()) {
            FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 1);
            RemoteWorker worker = coordinator.awaitWorker(fake);
            fake.close();
            eventually().until(() -> !worker.isOpen());

            ControlException failure = failureOf(worker.dispatch(TestJobs.job("late", "p")));

            assertThat(failure).isInstanceOf(DispatchRefusedException.class)
                    .hasMessageContaining("job late was not sent to worker w1");
            assertThat(coordinator.pool.isEmpty()).isTrue();
        }
    }

    @Test
    void aLostWorkerHasLeftThePoolBeforeAnyOfItsJobsFails() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start()) {
            AtomicBoolean stillInPool = new AtomicBoolean();
            CountDownLatch failed = new CountDownLatch(1);
            RemoteWorker worker;
            try (FakeWorker fake = FakeWorker.register(coordinator.address(), "w1", 1)) {
                worker = coordinator.awaitWorker("w1");
                worker.dispatch(TestJobs.job("j", "p")).whenComplete((o, e) -> {
                    stillInPool.set(coordinator.pool.snapshot().contains(worker));
                    failed.countDown();
                });
                fake.nextAssign();
            }
            assertThat(failed.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(stillInPool.get()).isFalse();
        }
    }

    // ---------------------------------------------------------------- listeners

    @Test
    void aListenerThatBlocksStallsNeitherRegistrationsNorJobsNorHeartbeats() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        SharedPool pool = new SharedPool();
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        WorkerServer server = WorkerServer.start(ServerOptions.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .selectorThreads(1).heartbeatInterval(Duration.ofMillis(100)).heartbeatTimeout(Duration.ofMillis(500))
                .build(), pool, new WorkerServer.Listener() {
                    @Override
                    public void onRegistered(RemoteWorker worker) {
                        seen.add("registered " + worker.id());
                        try {
                            release.await(); // a console that stopped taking output, say
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }

                    @Override
                    public void onLost(RemoteWorker worker, Throwable cause) {
                        seen.add("lost " + worker.id());
                    }
                });
        try (FakeWorker first = FakeWorker.register(server.address(), "first", 2);
             FakeWorker second = FakeWorker.register(server.address(), "second", 2)) {
            first.heartbeatEvery(50);
            first.serve(FakeWorker.HOLD);
            second.heartbeatEvery(50);
            second.serve(FakeWorker.ECHO);
            eventually().until(() -> pool.size() == 2);
            RemoteWorker w2 = (RemoteWorker) pool.snapshot().stream().filter(w -> w.id().equals("second"))
                    .findFirst().orElseThrow();

            List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
            for (Job job : TestJobs.jobs("j", 50)) {
                replies.add(w2.dispatch(job));
            }
            for (CompletableFuture<JobOutcome> reply : replies) {
                reply.get(10, TimeUnit.SECONDS);
            }
            // Well past the 500 ms heartbeat timeout: the selector thread kept heartbeating both.
            eventually().until(() -> first.received().stream().filter(m -> m instanceof Message.Heartbeat).count() >= 10);
            assertThat(pool.size()).isEqualTo(2);
            // The listener is still stuck in the first registration it heard of.
            assertThat(seen).hasSize(1);
        } finally {
            release.countDown();
            server.close();
        }
        // Events come in order per worker, once the listener lets go.
        assertThat(seen).containsSubsequence("registered first", "lost first");
        assertThat(seen).containsSubsequence("registered second", "lost second");
    }

    private static Job jobWithMetadata(String id, Map<String, Object> metadata) {
        return new Job(JobId.of(id), new EvalSpec("s", List.of(new Vignette("v0", "hi", null, metadata)),
                SpecParams.NONE));
    }

    private static ControlException failureOf(CompletableFuture<JobOutcome> reply) throws Exception {
        try {
            reply.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return (ControlException) e.getCause();
        }
        throw new AssertionError("expected a failure, got an outcome");
    }
}

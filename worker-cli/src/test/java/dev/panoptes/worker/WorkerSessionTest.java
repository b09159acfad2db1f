package dev.panoptes.worker;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.PooledJobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.wire.Message;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.testing.FakeCoordinator;
import dev.panoptes.testing.StubModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.SocketChannel;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** One session against a scripted coordinator on loopback: PROTOCOL.md's rules for workers. */
@Timeout(30)
class WorkerSessionTest {
    /** Heartbeats every 100 ms; the coordinator's silence only matters in the tests about it. */
    private static final WorkerOptions OPTIONS = WorkerOptions.defaults()
            .withHeartbeat(Duration.ofMillis(100))
            .withHeartbeatTimeout(Duration.ofSeconds(25));

    private final ExecutorService workerThreads = Executors.newCachedThreadPool();
    private final List<PooledJobRunner> pools = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final FakeCoordinator coordinator;

    WorkerSessionTest() throws IOException {
        coordinator = FakeCoordinator.start();
    }

    @AfterEach
    void tearDown() throws IOException {
        coordinator.close();
        workerThreads.shutdownNow();
        pools.forEach(PooledJobRunner::close);
    }

    @Test
    void workerRegistersRunsAJobAndReturnsAResult() throws Exception {
        Future<?> worker = serveWorker("w1", 1, new EvalJobRunner(new StubModel()), Duration.ofSeconds(1));

        FakeCoordinator.Peer peer = coordinator.accept();
        Message first = peer.next();
        assertThat(first).isInstanceOf(Message.Register.class);
        Message.Register register = (Message.Register) first;
        assertThat(register.workerId()).isEqualTo("w1");
        assertThat(register.capacity()).isEqualTo(1);
        assertThat(register.protocol()).isEqualTo(Message.PROTOCOL_VERSION);

        Job job = new Job(JobId.of("run1-0001"), new EvalSpec("demo", List.of(new Vignette("a", "hi"))));
        peer.send(new Message.Assign(job));
        Message.Result result = peer.expect(Message.Result.class);

        assertThat(result.outcome().jobId()).isEqualTo(job.id());
        assertThat(result.outcome().records()).hasSize(1);
        ResponseRecord record = result.outcome().records().get(0);
        assertThat(record.vignetteId()).isEqualTo("a");
        assertThat(record.response()).isEqualTo("re: hi");
        assertThat(record.model()).isEqualTo("stub-model");

        peer.closeGracefully();
        worker.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void the429sItsModelApiAnsweredAreReportedToTheCoordinatorOnceEachWithTheAnswers() throws Exception {
        java.util.concurrent.atomic.AtomicLong throttled = new java.util.concurrent.atomic.AtomicLong(2);
        AsyncJobRunner runner = new AsyncJobRunner() {
            @Override
            public java.util.concurrent.CompletionStage<dev.panoptes.control.JobOutcome> start(Job job) {
                // Each job met three 429s before its answer, as a retried call would.
                throttled.addAndGet(3);
                return java.util.concurrent.CompletableFuture.completedFuture(TestJobs.echo(job));
            }

            @Override
            public long throttledCount() {
                return throttled.get();
            }
        };
        serveAsync("w1", 2, runner);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Assign(TestJobs.job("j1", "hi")));
        peer.expect(Message.Result.class);
        // The two seen before the session are not this session's to report.
        assertThat(peer.expect(Message.Throttled.class).count()).isEqualTo(3);
        peer.send(new Message.Assign(TestJobs.job("j2", "yo")));
        peer.expect(Message.Result.class);
        assertThat(peer.expect(Message.Throttled.class).count()).isEqualTo(3);
        peer.closeGracefully();
    }

    @Test
    void runsTwoJobsAtOnceWithCapacityTwoAndAnswersInCompletionOrder() throws Exception {
        StubModel model = new StubModel().hold("slow").hold("fast");
        serveWorker("w1", 2, new EvalJobRunner(model), OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Assign(TestJobs.job("slow-job", "slow")));
        peer.send(new Message.Assign(TestJobs.job("fast-job", "fast")));
        await().atMost(PATIENCE).until(() -> model.inFlight() == 2);

        model.release("fast");
        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("fast-job"));
        model.release("slow");
        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("slow-job"));
        assertThat(model.maxInFlight()).isEqualTo(2);
    }

    @Test
    void aCancelStopsTheRunningJobAndAnswersItSoThatItsSlotFrees() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        serveWorker("w1", 1, job -> {
            if (job.id().value().equals("wedged")) {
                started.countDown();
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    interrupted.set(true);
                    throw e;
                }
            }
            return TestJobs.echo(job);
        }, OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("wedged", "p")));
        peer.send(new Message.Assign(TestJobs.job("queued", "p")));
        assertThat(started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();

        peer.send(new Message.Cancel(JobId.of("queued"), "deadline passed"));
        peer.send(new Message.Cancel(JobId.of("wedged"), "deadline passed"));

        List<Message.Failed> failed = List.of(peer.expect(Message.Failed.class), peer.expect(Message.Failed.class));
        assertThat(failed).extracting(f -> f.jobId().value()).containsExactlyInAnyOrder("wedged", "queued");
        assertThat(failed).allSatisfy(f -> {
            assertThat(f.error()).contains("the coordinator cancelled it");
            assertThat(f.scope()).isEqualTo(FailureScope.TRANSIENT);
        });
        // The answer goes at once; the runner's thread sees its interrupt in its own time.
        await().atMost(PATIENCE).untilTrue(interrupted);
        // The pool thread is clean for the next job.
        peer.send(new Message.Assign(TestJobs.job("next", "p")));
        assertThat(peer.expect(Message.Result.class).outcome().jobId().value()).isEqualTo("next");
    }

    @Test
    void aFailedFrameCarriesTheScopeOfTheFailure() throws Exception {
        serveWorker("w1", 1, job -> {
            switch (job.id().value()) {
                case "bad-url":
                    throw new WorkerFaultException("the model API answered HTTP 404");
                case "bad-prompt":
                    throw new JobFailedException("HTTP 400: prompt too long");
                default:
                    throw new WorkerException("HTTP 503");
            }
        }, OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        for (String id : List.of("bad-url", "bad-prompt", "busy")) {
            peer.send(new Message.Assign(TestJobs.job(id, "p")));
            Message.Failed failed = peer.expect(Message.Failed.class);
            assertThat(failed.jobId().value()).isEqualTo(id);
            assertThat(failed.scope()).isEqualTo(switch (id) {
                case "bad-url" -> FailureScope.WORKER;
                case "bad-prompt" -> FailureScope.JOB;
                default -> FailureScope.TRANSIENT;
            });
            // Retryable stays what an older coordinator expects: only the job's own failure is final.
            assertThat(failed.retryable()).isEqualTo(!id.equals("bad-prompt"));
        }
    }

    @Test
    void queuesAssignmentsBeyondItsCapacityAndAnswersEveryOne() throws Exception {
        StubModel model = new StubModel();
        serveWorker("w1", 1, new EvalJobRunner(model), OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        for (Job job : TestJobs.jobs("job", 5)) {
            peer.send(new Message.Assign(job));
        }
        List<JobId> answered = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            answered.add(peer.expect(Message.Result.class).outcome().jobId());
        }

        assertThat(answered).containsExactlyInAnyOrderElementsOf(
                TestJobs.jobs("job", 5).stream().map(Job::id).toList());
        assertThat(model.maxInFlight()).isEqualTo(1);
    }

    @Test
    void answersAVignettesOwnFailureWithAFailedAnswerAndATransientOneWithFailedRetryable() throws Exception {
        StubModel model = new StubModel()
                .fail("bad request", new JobFailedException("model API answered 400: prompt too long"))
                .fail("overloaded", new WorkerException("model API answered 503 six times"));
        serveWorker("w1", 1, new EvalJobRunner(model), OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Assign(TestJobs.job("permanent", "bad request", "hello")));
        Message.Result permanent = peer.expect(Message.Result.class);
        peer.send(new Message.Assign(TestJobs.job("transient", "overloaded")));
        Message.Failed transientFailure = peer.expect(Message.Failed.class);
        peer.send(new Message.Assign(TestJobs.job("fine", "hello")));
        Message.Result next = peer.expect(Message.Result.class);

        // The vignette's own failure is its answer; its neighbour in the job is still answered.
        assertThat(permanent.outcome().jobId()).isEqualTo(JobId.of("permanent"));
        assertThat(permanent.outcome().records()).hasSize(2);
        assertThat(permanent.outcome().records().get(0).error()).contains("400: prompt too long");
        assertThat(permanent.outcome().records().get(0).response()).isEmpty();
        assertThat(permanent.outcome().records().get(1).error()).isNull();
        assertThat(permanent.outcome().records().get(1).response()).isEqualTo("re: hello");
        assertThat(transientFailure.jobId()).isEqualTo(JobId.of("transient"));
        assertThat(transientFailure.retryable()).isTrue();
        assertThat(transientFailure.error()).contains("503");
        assertThat(next.outcome().records().get(0).response()).isEqualTo("re: hello");
    }

    @Test
    void answersABugInTheRunnerWithFailedRetryableAndGoesOnServing() throws Exception {
        JobRunner runner = job -> {
            if (job.id().value().equals("buggy")) {
                throw new IllegalStateException("runner bug");
            }
            return TestJobs.echo(job);
        };
        serveWorker("w1", 1, runner, OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Assign(TestJobs.job("buggy", "x")));
        Message.Failed failed = peer.expect(Message.Failed.class);
        peer.send(new Message.Assign(TestJobs.job("next", "y")));

        assertThat(failed.retryable()).isTrue();
        assertThat(failed.error()).contains("runner bug");
        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("next"));
    }

    @Test
    void answersAnOutcomeThatDoesNotAnswerTheJobWithFailedRetryable() throws Exception {
        JobRunner runner = job -> new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "only the first")));
        serveWorker("w1", 1, runner, OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Assign(TestJobs.job("two-prompts", "one", "two")));
        Message.Failed failed = peer.expect(Message.Failed.class);

        assertThat(failed.jobId()).isEqualTo(JobId.of("two-prompts"));
        assertThat(failed.retryable()).isTrue();
        assertThat(failed.error()).contains("missing vignettes [v1]");
    }

    @Test
    void sendsHeartbeatsWhileALongJobRuns() throws Exception {
        StubModel model = new StubModel().hold("long");
        serveWorker("w1", 1, new EvalJobRunner(model), OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Assign(TestJobs.job("long-job", "long")));
        await().atMost(PATIENCE).until(() -> model.started("long"));
        int before = peer.heartbeats();
        await().atMost(PATIENCE).until(() -> peer.heartbeats() >= before + 3);
        model.release("long");

        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("long-job"));
        assertThat(peer.received()).filteredOn(m -> m instanceof Message.Heartbeat)
                .allSatisfy(m -> assertThat(((Message.Heartbeat) m).workerId()).isEqualTo("w1"));
    }

    @Test
    void endsWithAnErrorWhenTheCoordinatorGoesSilent() throws Exception {
        WorkerOptions options = OPTIONS.withHeartbeatTimeout(Duration.ofMillis(500));
        Future<?> worker = serveWorker("w1", 1, TestJobs.echoRunner(), options);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        assertThatThrownBy(() -> worker.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("nothing received from coordinator")
                .hasMessageContaining("500ms (the heartbeat timeout)");
        assertThat(peer.framesUntilEndOfStream()).isEmpty();
        assertThat(peer.heartbeats()).isPositive();
    }

    @Test
    void staysConnectedPastTheHeartbeatTimeoutWhileTheCoordinatorHeartbeats() throws Exception {
        WorkerOptions options = OPTIONS.withHeartbeat(Duration.ofMillis(50))
                .withHeartbeatTimeout(Duration.ofMillis(1000));
        Future<?> worker = serveWorker("w1", 1, TestJobs.echoRunner(), options);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        // Answer each worker heartbeat with one of ours until the session has lived through
        // two heartbeat timeouts (40 beats of 50 ms against a 1 s timeout).
        for (int beats = 0; beats < 40; beats++) {
            assertThat(peer.next()).isInstanceOf(Message.Heartbeat.class);
            peer.send(Message.Heartbeat.COORDINATOR);
        }
        peer.send(new Message.Assign(TestJobs.job("still-here", "x")));

        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("still-here"));
        assertThat(worker).isNotDone();
    }

    @Test
    void beatsAtLeastAsOftenAsTheCoordinatorSaysItDoes() throws Exception {
        WorkerOptions slowBeats = WorkerOptions.defaults().withHeartbeat(Duration.ofMinutes(1));
        serveWorker("w1", 1, TestJobs.echoRunner(), slowBeats);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Registered(50));

        await().atMost(PATIENCE).until(() -> peer.heartbeats() >= 3);
    }

    @Test
    void returnsNormallyWhenTheCoordinatorClosesTheConnection() throws Exception {
        Future<?> worker = serveWorker("w1", 1, TestJobs.echoRunner(), OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.closeGracefully();

        worker.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void failsNamingTheAddressWhenNoCoordinatorListens() throws Exception {
        InetSocketAddress nobodyListens;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            nobodyListens = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
        }
        InetSocketAddress address = nobodyListens;

        assertThatThrownBy(() -> Workers.serveBlockingWorker(address, "w1", 1, TestJobs.echoRunner(), OPTIONS))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("cannot connect to coordinator " + Workers.describe(address) + ": ")
                .hasCauseInstanceOf(java.net.ConnectException.class);
    }

    @Test
    void endsWithTheReasonWhenTheCoordinatorRejectsTheRegistration() throws Exception {
        Future<?> worker = serveWorker("w1", 1, TestJobs.echoRunner(), OPTIONS.withToken("wrong"));
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Rejected("bad token"));

        assertThatThrownBy(() -> worker.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(RegistrationRejectedException.class)
                .hasMessageContaining("rejected the registration of worker w1: bad token")
                .satisfies(e -> assertThat(((RegistrationRejectedException) e).reason()).isEqualTo("bad token"));
    }

    @Test
    void registersWithItsTokenAndLabels() throws Exception {
        serveWorker("w-7", 3, TestJobs.echoRunner(),
                OPTIONS.withToken("s3cret").withLabels(Map.of("model", "llama")));

        Message.Register register = coordinator.acceptRegistered().register();

        assertThat(register.workerId()).isEqualTo("w-7");
        assertThat(register.capacity()).isEqualTo(3);
        assertThat(register.token()).isEqualTo("s3cret");
        assertThat(register.labels()).containsEntry("model", "llama");
        assertThat(register.toString()).doesNotContain("s3cret");
    }

    @Test
    void ignoresFramesOnlyWorkersSendAndGoesOnServing() throws Exception {
        serveWorker("w1", 1, TestJobs.echoRunner(), OPTIONS);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        peer.send(new Message.Register("confused", 1));
        peer.send(new Message.Drain());
        peer.send(new Message.Assign(TestJobs.job("after-slips", "x")));

        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("after-slips"));
    }

    @Test
    void drainSendsDrainThenTheInFlightResultThenCloses() throws Exception {
        StubModel model = new StubModel().hold("busy");
        WorkerSession session = openSession("w1", 1, new EvalJobRunner(model));
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("in-flight", "busy")));
        await().atMost(PATIENCE).until(() -> model.started("busy"));

        CompletableFuture<Boolean> drained = onAnotherThread(() -> session.drain(PATIENCE));
        peer.expect(Message.Drain.class);
        model.release("busy");
        Message.Result result = peer.expect(Message.Result.class);
        List<Message> rest = peer.framesUntilEndOfStream();
        peer.close();

        assertThat(result.outcome().jobId()).isEqualTo(JobId.of("in-flight"));
        assertThat(rest).isEmpty();
        assertThat(drained.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void drainAbandonsAJobStillRunningWhenTheGracePeriodEnds() throws Exception {
        StubModel model = new StubModel().hold("stuck");
        WorkerSession session = openSession("w1", 1, new EvalJobRunner(model));
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("stuck-job", "stuck")));
        await().atMost(PATIENCE).until(() -> model.started("stuck"));

        boolean clean = session.drain(Duration.ofMillis(200));

        assertThat(clean).isFalse();
        assertThat(peer.framesUntilEndOfStream()).containsExactly(new Message.Drain());
        assertThat(session.heldCount()).isZero();
    }

    @Test
    void neverWritesTheLateAnswerOfAJobAbandonedWithItsConnection() throws Exception {
        CountDownLatch finishAbandoned = new CountDownLatch(1);
        CountDownLatch abandonedStarted = new CountDownLatch(1);
        CompletableFuture<Void> abandonedReturned = new CompletableFuture<>();
        JobRunner runner = job -> {
            if (job.id().value().equals("abandoned")) {
                abandonedStarted.countDown();
                awaitIgnoringInterrupts(finishAbandoned);
                abandonedReturned.complete(null);
            }
            return TestJobs.echo(job);
        };
        WorkerOptions options = OPTIONS.withBackoff(Duration.ofMillis(10), Duration.ofMillis(50));
        WorkerLoop loop = new WorkerLoop(coordinator.address(), "w1", 1, runner, options);
        onAnotherThread(() -> {
            loop.runForever();
            return null;
        });
        try {
            FakeCoordinator.Peer first = coordinator.acceptRegistered();
            first.send(new Message.Assign(TestJobs.job("abandoned", "x")));
            assertThat(abandonedStarted.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
            first.close();

            FakeCoordinator.Peer second = coordinator.acceptRegistered();
            finishAbandoned.countDown();
            abandonedReturned.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            second.send(new Message.Assign(TestJobs.job("fresh", "y")));

            assertThat(second.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("fresh"));
            assertThat(second.received()).noneMatch(m -> m instanceof Message.Result r
                    && r.outcome().jobId().value().equals("abandoned"));
        } finally {
            loop.close();
        }
    }

    // ---- the asynchronous seam ----

    @Test
    void aThousandJobsInFlightCostNoMoreThreadsThanOne() throws Exception {
        Map<String, CompletableFuture<JobOutcome>> running = new java.util.concurrent.ConcurrentHashMap<>();
        AsyncJobRunner held = job -> running.computeIfAbsent(job.id().value(), k -> new CompletableFuture<>());
        serveAsync("w1", 1024, held);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        java.util.Set<Thread> serving = Thread.getAllStackTraces().keySet();

        for (int i = 0; i < 1024; i++) {
            peer.send(new Message.Assign(TestJobs.job("j" + i, "p")));
        }
        await().atMost(PATIENCE).pollInSameThread().until(() -> running.size() == 1024);
        java.util.Set<Thread> holding = new java.util.HashSet<>(Thread.getAllStackTraces().keySet());
        holding.removeAll(serving);
        // Every job finishes on this one thread: the session batches their answers.
        running.forEach((id, f) -> f.complete(TestJobs.echo(TestJobs.job(id, "p"))));

        java.util.Set<String> answered = new java.util.HashSet<>();
        while (answered.size() < 1024) {
            answered.add(peer.expect(Message.Result.class).outcome().jobId().value());
        }
        assertThat(holding).as("threads started while 1,024 jobs were in flight").isEmpty();
    }

    @Test
    void aJobThatFinishesAsItStartsIsAnsweredByTheSessionThreadItself() throws Exception {
        List<Thread> completedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        Future<?> session = serveAsync("w1", 4, job -> {
            completedOn.add(Thread.currentThread());
            return CompletableFuture.completedFuture(TestJobs.echo(job));
        });
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("instant", "p")));
        assertThat(peer.expect(Message.Result.class).outcome().jobId().value()).isEqualTo("instant");
        assertThat(completedOn).singleElement().satisfies(t -> assertThat(t.getName()).startsWith("pool-"));
        peer.closeGracefully();
        session.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void theFirstAnswersOfABigReadLeaveBeforeItsLastJobsStart() throws Exception {
        // The coordinator works on the first answers while the session decodes the rest; here the
        // last job's start waits until the coordinator holds the answers of the first 32.
        CountDownLatch firstAnswersReceived = new CountDownLatch(1);
        serveAsync("w1", 64, job -> {
            if (job.id().value().equals("j63")) {
                try {
                    firstAnswersReceived.await(2 * PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return CompletableFuture.completedFuture(TestJobs.echo(job));
        });
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        List<Message> window = new java.util.ArrayList<>();
        for (int i = 0; i < 64; i++) {
            window.add(new Message.Assign(TestJobs.job("j" + i, "p")));
        }
        peer.sendAll(window);

        java.util.Set<String> answered = new java.util.HashSet<>();
        while (answered.size() < 32) {
            answered.add(peer.expect(Message.Result.class).outcome().jobId().value());
        }
        assertThat(answered).doesNotContain("j63");
        firstAnswersReceived.countDown();
        while (answered.size() < 64) {
            answered.add(peer.expect(Message.Result.class).outcome().jobId().value());
        }
    }

    @Test
    void aRunnerThatThrowsWhileStartingAJobFailsThatJobAndTheSessionGoesOn() throws Exception {
        serveAsync("w1", 2, job -> {
            if (job.id().value().equals("bad")) {
                throw new IllegalStateException("runner bug");
            }
            return CompletableFuture.completedFuture(TestJobs.echo(job));
        });
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("bad", "p")));
        Message.Failed failed = peer.expect(Message.Failed.class);
        assertThat(failed.error()).contains("runner bug");
        assertThat(failed.scope()).isEqualTo(FailureScope.TRANSIENT);
        peer.send(new Message.Assign(TestJobs.job("good", "p")));
        assertThat(peer.expect(Message.Result.class).outcome().jobId().value()).isEqualTo("good");
    }

    @Test
    void aCancelReachesAnAsynchronousRunnerAsACancelledFuture() throws Exception {
        CompletableFuture<JobOutcome> model = new CompletableFuture<>();
        serveAsync("w1", 1, job -> model);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("slow", "p")));
        await().atMost(PATIENCE).pollInSameThread().until(() -> model.getNumberOfDependents() > 0);

        peer.send(new Message.Cancel(JobId.of("slow"), "deadline passed"));

        assertThat(peer.expect(Message.Failed.class).error()).contains("the coordinator cancelled it");
        assertThat(model).isCancelled();
    }

    // ---- helpers ----

    private Future<?> serveWorker(String id, int capacity, JobRunner runner, Duration heartbeat) {
        return workerThreads.submit(() -> {
            Workers.serveBlockingWorker(coordinator.address(), id, capacity, runner, heartbeat);
            return null;
        });
    }

    private Future<?> serveWorker(String id, int capacity, JobRunner runner, WorkerOptions options) {
        return workerThreads.submit(() -> {
            Workers.serveBlockingWorker(coordinator.address(), id, capacity, runner, options);
            return null;
        });
    }

    private Future<?> serveAsync(String id, int capacity, AsyncJobRunner runner) {
        return workerThreads.submit(() -> {
            Workers.serveWorker(coordinator.address(), id, capacity, runner, OPTIONS);
            return null;
        });
    }

    /** A session whose serve() runs on a worker thread, so the test can call drain() itself. */
    private WorkerSession openSession(String id, int capacity, JobRunner runner) throws IOException {
        SocketChannel channel = SocketChannel.open();
        Workers.connect(channel, coordinator.address(), Duration.ofSeconds(5));
        PooledJobRunner pool = new PooledJobRunner(runner, capacity, "test-jobs");
        pools.add(pool);
        WorkerSession session = new WorkerSession(channel, id, capacity, pool, OPTIONS);
        workerThreads.submit(() -> {
            session.serve();
            return null;
        });
        return session;
    }

    private <T> CompletableFuture<T> onAnotherThread(java.util.concurrent.Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        workerThreads.submit(() -> {
            try {
                f.complete(task.call());
            } catch (Exception | Error e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    /** Models a runner that finishes its call even when interrupted, as blocking I/O may. */
    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}

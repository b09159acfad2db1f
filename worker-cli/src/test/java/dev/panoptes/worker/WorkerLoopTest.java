package dev.panoptes.worker;

import dev.panoptes.control.JobId;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.testing.FakeCoordinator;
import dev.panoptes.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/** The reconnect loop against coordinators that close, restart, refuse and reject. */
@Timeout(30)
class WorkerLoopTest {
    private static final WorkerOptions OPTIONS = WorkerOptions.defaults()
            .withHeartbeat(Duration.ofMillis(100))
            .withHeartbeatTimeout(Duration.ofSeconds(25))
            .withConnectTimeout(Duration.ofSeconds(2))
            .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final LogCapture loopLog = LogCapture.of(WorkerLoop.class);

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        loopLog.close();
    }

    @Test
    void reconnectsAndRegistersAgainAfterTheCoordinatorClosesTheConnection() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        start(new WorkerLoop(coordinator.address(), "loop-close", 1, TestJobs.echoRunner(), OPTIONS));

        coordinator.acceptRegistered().closeGracefully();
        FakeCoordinator.Peer second = coordinator.acceptRegistered();
        second.send(new Message.Assign(TestJobs.job("after-reconnect", "x")));

        assertThat(second.register().workerId()).isEqualTo("loop-close");
        assertThat(second.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("after-reconnect"));
        assertThat(loopLog.messagesContaining("worker=loop-close - coordinator")).anySatisfy(m ->
                assertThat(m).contains("closed the connection; reconnecting in"));
    }

    @Test
    void reconnectsWithBackoffAfterTheCoordinatorRestartsOnTheSamePort() throws Exception {
        FakeCoordinator original = FakeCoordinator.start();
        int port = original.port();
        start(new WorkerLoop(original.address(), "loop-restart", 1, TestJobs.echoRunner(), OPTIONS));
        original.acceptRegistered();

        original.close();
        await().atMost(PATIENCE).until(() ->
                loopLog.messagesContaining("worker=loop-restart - cannot connect to coordinator").size() >= 3);
        FakeCoordinator restarted = closeLater(FakeCoordinator.startOn(port));
        FakeCoordinator.Peer peer = restarted.acceptRegistered();
        peer.send(new Message.Assign(TestJobs.job("after-restart", "x")));

        assertThat(peer.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("after-restart"));
        List<Long> delaysMs = loggedDelaysMs("loop-restart", "cannot connect to coordinator");
        assertThat(delaysMs.get(0)).isGreaterThanOrEqualTo(20);
        assertThat(delaysMs.get(1)).isGreaterThanOrEqualTo(40);
        assertThat(delaysMs.get(2)).isGreaterThanOrEqualTo(80);
        assertThat(delaysMs).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(200));
    }

    @Test
    void waitsLongerAfterEachAttemptThatTheCoordinatorDoesNotAccept() throws Exception {
        try (ServerSocket slammer = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress(slammer.getInetAddress(), slammer.getLocalPort());
            WorkerOptions options = OPTIONS.withBackoff(Duration.ofMillis(40), Duration.ofMillis(160));
            start(new WorkerLoop(address, "loop-slam", 1, TestJobs.echoRunner(), options));
            slammer.setSoTimeout((int) PATIENCE.toMillis());

            List<Long> acceptedAtNanos = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Socket s = slammer.accept();
                acceptedAtNanos.add(System.nanoTime());
                s.close();
            }

            long[] minimumGapsMs = {20, 40, 80, 80};
            for (int i = 0; i < minimumGapsMs.length; i++) {
                long gapMs = TimeUnit.NANOSECONDS.toMillis(acceptedAtNanos.get(i + 1) - acceptedAtNanos.get(i));
                assertThat(gapMs).as("pause before attempt %d", i + 2).isGreaterThanOrEqualTo(minimumGapsMs[i]);
            }
        }
    }

    @Test
    void givenSeveralCoordinatorsFollowsWhicheverHoldsTheRun() throws Exception {
        FakeCoordinator standby = closeLater(FakeCoordinator.start());
        FakeCoordinator primary = FakeCoordinator.start();
        start(new WorkerLoop(List.of(standby.address(), primary.address()), "loop-follow", 1,
                TestJobs.echoRunner(), OPTIONS));

        // The standby does not hold the run: it says so, and the worker tries the next address.
        FakeCoordinator.Peer told = standby.acceptRegistered();
        told.send(new Message.Rejected("this is a standby coordinator: it does not hold run r", true));
        told.framesUntilEndOfStream();
        told.close();
        FakeCoordinator.Peer held = primary.acceptRegistered();
        held.send(new Message.Assign(TestJobs.job("on-primary", "x")));
        assertThat(held.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("on-primary"));

        // The primary dies; the standby takes the run over and the worker finds it there.
        primary.close();
        FakeCoordinator.Peer taken = standby.acceptRegistered();
        taken.send(new Message.Assign(TestJobs.job("on-standby", "x")));

        assertThat(taken.expect(Message.Result.class).outcome().jobId()).isEqualTo(JobId.of("on-standby"));
        assertThat(loopLog.messagesContaining("worker=loop-follow - cannot connect to coordinator "
                + Workers.describe(primary.address()))).first().asString()
                .contains("; next: " + Workers.describe(standby.address()) + "; reconnecting in ");
    }

    @Test
    void logsARetryableRejectionOnEveryAttemptOnceAndKeepsTrying() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        CompletableFuture<Void> running = start(new WorkerLoop(coordinator.address(), "loop-rejected", 1,
                TestJobs.echoRunner(), OPTIONS.withToken("s3cr3t")));
        String reason = "the coordinator is still loading the suite; try again shortly";

        for (int i = 0; i < 3; i++) {
            FakeCoordinator.Peer peer = coordinator.acceptRegistered();
            peer.send(new Message.Rejected(reason, true));
            peer.framesUntilEndOfStream();
            peer.close();
        }
        FakeCoordinator.Peer fourth = coordinator.acceptRegistered();

        assertThat(fourth.register().workerId()).isEqualTo("loop-rejected");
        assertThat(running).isNotDone();
        await().atMost(PATIENCE).until(() -> loopLog.eventsContaining(reason).size() >= 3);
        assertThat(loopLog.eventsContaining(reason))
                .allSatisfy(e -> assertThat(e.getLevel().toString()).isEqualTo("WARN"))
                .allSatisfy(e -> assertThat(e.getFormattedMessage())
                        .startsWith("worker=loop-rejected - coordinator " + Workers.describe(coordinator.address())
                                + " rejected the registration for now: " + reason + "; retrying in ")
                        .doesNotContain("s3cr3t"));
    }

    @Test
    void aRejectionForGoodEndsTheLoopWithTheCoordinatorsReasonAndLogsNothingOfIt() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        CompletableFuture<Void> running = start(new WorkerLoop(coordinator.address(), "loop-fatal", 1,
                TestJobs.echoRunner(), OPTIONS.withToken("wrong")));
        String reason = "wrong token; check --token on the worker against the coordinator's";

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Rejected(reason, false));
        Throwable thrown = catchThrowable(() -> running.get(PATIENCE.toSeconds(), TimeUnit.SECONDS));

        assertThat(thrown).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(RegistrationRejectedException.class);
        RegistrationRejectedException rejection = (RegistrationRejectedException) thrown.getCause();
        assertThat(rejection.reason()).isEqualTo(reason);
        assertThat(rejection.retryable()).isFalse();
        assertThat(rejection.getMessage()).contains("worker loop-fatal").endsWith(": " + reason);
        assertThat(peer.framesUntilEndOfStream()).isEmpty();
        // The loop has returned: had it reconnected, the connection would be waiting here.
        assertThat(coordinator.takePendingConnection()).isFalse();
        assertThat(loopLog.messagesContaining(reason)).isEmpty();
        assertThat(loopLog.messagesContaining("reconnecting")).isEmpty();
    }

    @Test
    void startsTheBackoffOverAfterASessionTheCoordinatorAccepted() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        WorkerOptions options = OPTIONS.withBackoff(Duration.ofMillis(20), Duration.ofSeconds(2));
        start(new WorkerLoop(coordinator.address(), "loop-reset", 1, TestJobs.echoRunner(), options));

        for (int i = 0; i < 4; i++) {
            FakeCoordinator.Peer refused = coordinator.acceptRegistered();
            refused.send(new Message.Rejected("not yet", true));
            refused.framesUntilEndOfStream();
            refused.close();
        }
        FakeCoordinator.Peer accepted = coordinator.acceptRegistered();
        accepted.send(new Message.Registered(100));
        accepted.closeGracefully();
        coordinator.acceptRegistered();

        List<Long> afterRejections = loggedDelaysMs("loop-reset", "rejected the registration for now");
        List<Long> afterAccepted = loggedDelaysMs("loop-reset", "closed the connection");
        assertThat(afterRejections).hasSize(4);
        assertThat(afterRejections.get(3)).isGreaterThanOrEqualTo(80);
        assertThat(afterAccepted).hasSize(1);
        assertThat(afterAccepted.get(0)).isLessThanOrEqualTo(20);
    }

    @Test
    void drainSendsDrainClosesAndEndsTheLoop() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        WorkerLoop loop = new WorkerLoop(coordinator.address(), "loop-drain", 1, TestJobs.echoRunner(), OPTIONS);
        CompletableFuture<Void> running = start(loop);
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(() -> {
            try {
                return loop.drain(PATIENCE);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });

        assertThat(peer.framesUntilEndOfStream()).containsExactly(new Message.Drain());
        peer.close();
        assertThat(drained.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        running.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void closeEndsTheLoopWhileTheCoordinatorIsDown() throws Exception {
        InetSocketAddress nobodyListens;
        try (ServerSocket probe = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            nobodyListens = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
        }
        WorkerOptions slow = OPTIONS.withBackoff(Duration.ofSeconds(20), Duration.ofSeconds(20));
        WorkerLoop loop = new WorkerLoop(nobodyListens, "loop-down", 1, TestJobs.echoRunner(), slow);
        CompletableFuture<Void> running = start(loop);
        await().atMost(PATIENCE).until(() ->
                !loopLog.messagesContaining("worker=loop-down - cannot connect to coordinator").isEmpty());

        loop.close();

        running.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }

    // ---- helpers ----

    /** Runs the loop on its own thread; closes it after the test. */
    private CompletableFuture<Void> start(WorkerLoop loop) {
        toClose.add(0, loop);
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                loop.runForever();
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "test-loop");
        t.setDaemon(true);
        t.start();
        return done;
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    /** The "reconnecting in Nms" / "retrying in Nms" delays the loop logged for lines with {@code cause}. */
    private List<Long> loggedDelaysMs(String workerId, String cause) {
        Pattern delay = Pattern.compile("(?:reconnecting|retrying) in (\\d+)ms");
        List<Long> delays = new ArrayList<>();
        for (String m : loopLog.messagesContaining("worker=" + workerId + " - ")) {
            Matcher matcher = delay.matcher(m);
            if (m.contains(cause) && matcher.find()) {
                delays.add(Long.parseLong(matcher.group(1)));
            }
        }
        return delays;
    }
}

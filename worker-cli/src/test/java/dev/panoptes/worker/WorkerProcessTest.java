package dev.panoptes.worker;

import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.panoptes.admin.AdminServer;
import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.eval.http.ModelApiCheck.Result;
import dev.panoptes.eval.http.ModelApiCheck.Verdict;
import dev.panoptes.testing.FakeCoordinator;
import dev.panoptes.testing.LogCapture;
import dev.panoptes.testing.Scrapes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;

/** The worker process's own decisions before and around the reconnect loop, in-process. */
@Timeout(30)
class WorkerProcessTest {
    private static final WorkerOptions OPTIONS = WorkerOptions.defaults()
            .withHeartbeat(Duration.ofMillis(200))
            .withHeartbeatTimeout(Duration.ofSeconds(25))
            .withConnectTimeout(Duration.ofSeconds(2))
            .withBackoff(Duration.ofMillis(10), Duration.ofMillis(40));

    private final LogCapture processLog = LogCapture.of(WorkerProcess.class);
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        processLog.close();
    }

    @Test
    void waitsWithBackoffWhileTheModelApiIsNotReadyThenGoesOn() throws Exception {
        ScriptedProbe probe = new ScriptedProbe(
                new Result(Verdict.TRANSIENT, "cannot connect to the model API at 127.0.0.1:8000 (Connection refused);"
                        + " is the model server running?"),
                new Result(Verdict.TRANSIENT, "the model API at http://127.0.0.1:8000/v1 answered GET /models with"
                        + " HTTP 503: Loading model"),
                new Result(Verdict.OK, "model API at http://127.0.0.1:8000/v1 serves 'm'"));
        // With no jitter the pauses are half the doubling ceiling: 5 ms, then 10 ms.
        Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofMillis(40), () -> 0.0);

        boolean usable = WorkerProcess.awaitUsableModelApi("w-wait", probe, backoff);

        assertThat(usable).isTrue();
        assertThat(probe.calls).hasValue(3);
        assertThat(backoff.failures()).isEqualTo(2);
        assertThat(levelsAndMessages()).containsExactly(
                "WARN worker=w-wait - the model API is not ready: cannot connect to the model API at 127.0.0.1:8000"
                        + " (Connection refused); is the model server running?; checking again in 5ms",
                "WARN worker=w-wait - the model API is not ready: the model API at http://127.0.0.1:8000/v1 answered"
                        + " GET /models with HTTP 503: Loading model; checking again in 10ms",
                "INFO worker=w-wait - model API at http://127.0.0.1:8000/v1 serves 'm'");
    }

    @Test
    void aFatalVerdictEndsTheCheckWithOneErrorLine() throws Exception {
        String why = "the model API at http://h:8000/v1 does not serve model 'x'; it serves y; check --model";
        ScriptedProbe probe = new ScriptedProbe(new Result(Verdict.FATAL, why));

        boolean usable = WorkerProcess.awaitUsableModelApi("w-fatal", probe,
                new Backoff(Duration.ofMillis(1), Duration.ofMillis(4)));

        assertThat(usable).isFalse();
        assertThat(probe.calls).hasValue(1);
        assertThat(levelsAndMessages()).containsExactly("ERROR worker=w-fatal - the model API check failed: " + why
                + ". Exiting with code 3 without registering");
    }

    @Test
    void anUnusableModelApiExits3WithoutConnectingToTheCoordinator() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        ScriptedProbe probe = new ScriptedProbe(new Result(Verdict.FATAL, "bad URL"));

        int exit = WorkerProcess.serveUntilSignalled(settings(coordinator, "w-exit3"), TestJobs.asyncEchoRunner(), probe);

        assertThat(exit).isEqualTo(WorkerMain.EXIT_MODEL_API_UNUSABLE).isEqualTo(3);
        assertThat(coordinator.takePendingConnection()).isFalse();
    }

    @Test
    void aRejectionForGoodExits4PrintingTheReasonOnce() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        String reason = "wrong token; check --token on the worker against the coordinator's";
        ScriptedProbe probe = new ScriptedProbe(new Result(Verdict.OK, "model API at http://h/v1 serves 'm'"));
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            try {
                return WorkerProcess.serveUntilSignalled(settings(coordinator, "w-exit4"), TestJobs.asyncEchoRunner(),
                        probe);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Rejected(reason, false));

        assertThat(exit.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(WorkerMain.EXIT_REJECTED).isEqualTo(4);
        assertThat(processLog.messagesContaining(reason)).containsExactly("worker=w-exit4 - coordinator "
                + Workers.describe(coordinator.address()) + " rejected this worker for good: " + reason
                + ". Exiting with code 4");
        assertThat(coordinator.takePendingConnection()).isFalse();
    }

    @Test
    void withoutAProbeTheWorkerGoesStraightToTheCoordinator() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            try {
                return WorkerProcess.serveUntilSignalled(settings(coordinator, "w-nocheck"), TestJobs.asyncEchoRunner(),
                        null);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });

        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Rejected("bad id", false));

        assertThat(peer.register().workerId()).isEqualTo("w-nocheck");
        assertThat(exit.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(4);
        assertThat(processLog.messagesContaining("model API")).noneMatch(m -> m.contains("serves"));
    }

    @Test
    void theWorkersMetricsAreBehindTheTokenItRegistersWith() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        LogCapture adminLog = closeLater(LogCapture.of(AdminServer.class));
        WorkerSettings settings = new WorkerSettings(coordinator.address(), URI.create("http://127.0.0.1:1/v1"),
                List.of("m"), null, "w-metrics", 1, OPTIONS.withToken("w-t0ken"), Duration.ofSeconds(1), null, false,
                false, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), false);
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            try {
                return WorkerProcess.serveUntilSignalled(settings, TestJobs.asyncEchoRunner(), null);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();

        String started = adminLog.messagesContaining("admin endpoint on http://").get(0);
        assertThat(started).contains("every request needs the token").doesNotContain("w-t0ken");
        java.util.regex.Matcher port = java.util.regex.Pattern.compile("http://127\\.0\\.0\\.1:(\\d+)/")
                .matcher(started);
        assertThat(port.find()).as(started).isTrue();
        InetSocketAddress admin = new InetSocketAddress("127.0.0.1", Integer.parseInt(port.group(1)));
        assertThat(Scrapes.get(admin, "/metrics", null).statusCode()).isEqualTo(401);
        assertThat(Scrapes.get(admin, "/metrics", "not-it").statusCode()).isEqualTo(401);
        assertThat(Scrapes.metrics(admin, "w-t0ken")).contains("panoptes_worker_jobs_running");

        peer.send(new Message.Rejected("enough", false));
        assertThat(exit.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(4);
    }

    @Test
    void theModelApiIsCheckedBeforeTheRunnerIsMadeAndTheWorkerRegistersOnlyOnceItIs() throws Exception {
        // The runner waits for the sandbox check in production: the model API check must not wait
        // for it, and no registration may go out before it has answered.
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        CountDownLatch sandboxCheckAnswered = new CountDownLatch(1);
        CountDownLatch runnerAsked = new CountDownLatch(1);
        AtomicInteger probedBeforeRunner = new AtomicInteger();
        ScriptedProbe probe = new ScriptedProbe(new Result(Verdict.OK, "model API at http://h/v1 serves 'm'"));
        WorkerProcess.Runners runners = () -> {
            probedBeforeRunner.set(probe.calls.get());
            runnerAsked.countDown();
            sandboxCheckAnswered.await();
            return TestJobs.asyncEchoRunner();
        };
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            try {
                return WorkerProcess.serveUntilSignalled(settings(coordinator, "w-order"), runners, probe);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });

        assertThat(runnerAsked.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(probedBeforeRunner).hasValue(1);
        assertThat(coordinator.takePendingConnection()).as("registered before the sandbox check answered").isFalse();
        sandboxCheckAnswered.countDown();
        FakeCoordinator.Peer peer = coordinator.acceptRegistered();
        peer.send(new Message.Rejected("enough", false));
        assertThat(exit.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(4);
    }

    @Test
    void anUnusableModelApiExits3WithoutMakingTheRunner() throws Exception {
        FakeCoordinator coordinator = closeLater(FakeCoordinator.start());
        AtomicInteger made = new AtomicInteger();
        WorkerProcess.Runners runners = () -> {
            made.incrementAndGet();
            return TestJobs.asyncEchoRunner();
        };

        int exit = WorkerProcess.serveUntilSignalled(settings(coordinator, "w-exit3r"), runners,
                new ScriptedProbe(new Result(Verdict.FATAL, "bad URL")));

        assertThat(exit).isEqualTo(3);
        assertThat(made).hasValue(0);
        assertThat(coordinator.takePendingConnection()).isFalse();
    }

    // ---- helpers ----

    private WorkerSettings settings(FakeCoordinator coordinator, String id) {
        return new WorkerSettings(coordinator.address(), URI.create("http://127.0.0.1:1/v1"), List.of("m"), null, id, 1,
                OPTIONS, Duration.ofSeconds(1), null, true, false, null, false);
    }

    private List<String> levelsAndMessages() {
        return processLog.eventsContaining("worker=").stream()
                .map((ILoggingEvent e) -> e.getLevel() + " " + e.getFormattedMessage())
                .toList();
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    /** Answers with the scripted results in order, repeating the last one. */
    private static final class ScriptedProbe implements WorkerProcess.ModelApiProbe {
        private final Deque<Result> script;
        final AtomicInteger calls = new AtomicInteger();

        ScriptedProbe(Result... results) {
            this.script = new ArrayDeque<>(List.of(results));
        }

        @Override
        public synchronized Result check() {
            calls.incrementAndGet();
            return script.size() > 1 ? script.poll() : script.peek();
        }
    }
}

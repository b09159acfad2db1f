package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bytes that break PROTOCOL.md close the connection that sent them, and only it: the
 * coordinator and every other worker carry on, and new workers can still register.
 */
class HostileBytesTest {
    private TestCoordinator coordinator;
    private FakeWorker bystander;
    private RemoteWorker bystanderWorker;

    @BeforeEach
    void startCoordinatorWithAHealthyWorker() throws IOException {
        coordinator = TestCoordinator.start();
        bystander = FakeWorker.register(coordinator.address(), "bystander", 2).serve(FakeWorker.ECHO);
        bystanderWorker = coordinator.awaitWorker("bystander");
    }

    @AfterEach
    void stop() throws IOException {
        bystander.close();
        coordinator.close();
    }

    /** The healthy worker still serves, and a newcomer can still register and serve. */
    private void everyoneElseCarriesOn() throws IOException {
        assertThat(bystanderWorker.dispatch(TestJobs.job("still-fine", "p")).orTimeout(10, TimeUnit.SECONDS).join()
                .records()).hasSize(1);
        try (FakeWorker newcomer = FakeWorker.register(coordinator.address(), "newcomer", 1)
                .serve(FakeWorker.ECHO)) {
            RemoteWorker worker = coordinator.awaitWorker(newcomer);
            assertThat(worker.dispatch(TestJobs.job("new", "p")).orTimeout(10, TimeUnit.SECONDS).join().records())
                    .hasSize(1);
        }
        assertThat(bystanderWorker.isOpen()).isTrue();
    }

    private FakeWorker registeredAttacker() throws IOException {
        FakeWorker attacker = FakeWorker.register(coordinator.address(), "attacker", 1);
        coordinator.awaitWorker("attacker");
        return attacker;
    }

    private static Throwable failureOf(CompletableFuture<JobOutcome> future) {
        Throwable t = future.handle((ok, e) -> e).orTimeout(10, TimeUnit.SECONDS).join();
        return t instanceof CompletionException ? t.getCause() : t;
    }

    @Test
    void aLengthPrefixOf0x7FFFFFFFClosesARegisteredWorkersConnectionAndFailsItsJobsRetryably() throws IOException {
        try (FakeWorker attacker = registeredAttacker()) {
            RemoteWorker worker = coordinator.awaitWorker("attacker");
            CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("victim", "p"));
            attacker.nextAssign();

            attacker.sendRaw(new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, '{'});

            Throwable failure = failureOf(reply);
            assertThat(failure).isInstanceOf(ControlException.class);
            assertThat(((ControlException) failure).isRetryable()).isTrue();
            assertThat(failure.getCause()).isInstanceOf(ProtocolException.class)
                    .hasMessageContaining("2147483647").hasMessageContaining("exceeds the limit");
            assertThat(attacker.readUntilClosed()).isEmpty();
            eventually().until(() -> coordinator.pool.size() == 1);
        }
        everyoneElseCarriesOn();
    }

    @Test
    void aLengthPrefixOf0x7FFFFFFFAsTheFirstFrameIsRejected() throws IOException {
        try (FakeWorker attacker = FakeWorker.connect(coordinator.address())) {
            attacker.sendRaw(new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});

            assertThat(attacker.readUntilClosed()).hasValueSatisfying(reason ->
                    assertThat(reason).contains("protocol error").contains("exceeds the limit"));
        }
        everyoneElseCarriesOn();
    }

    @Test
    void aZeroLengthFrameClosesTheConnection() throws IOException {
        try (FakeWorker attacker = registeredAttacker()) {
            attacker.sendRaw(new byte[] {0, 0, 0, 0});

            assertThat(attacker.readUntilClosed()).isEmpty();
        }
        eventually().until(() -> coordinator.lost.size() == 1);
        assertThat(coordinator.lostCauses.get(0)).isInstanceOf(ProtocolException.class);
        everyoneElseCarriesOn();
    }

    @Test
    void randomGarbageClosesOnlyThatConnection() throws IOException {
        byte[] garbage = new byte[64 * 1024];
        new Random(42).nextBytes(garbage);
        garbage[0] = 0; // a length of a few KiB, so that a body arrives whole and fails to parse
        garbage[1] = 0;
        garbage[2] = 0x10;
        try (FakeWorker attacker = registeredAttacker()) {
            try {
                attacker.sendRaw(garbage);
            } catch (IOException e) {
                // The coordinator may close while we are still writing: that is the point.
            }
            assertThat(attacker.readUntilClosed()).isEmpty();
        }
        eventually().until(() -> coordinator.lost.size() == 1);
        everyoneElseCarriesOn();
    }

    @Test
    void randomGarbageBeforeRegisteringIsRejected() throws IOException {
        byte[] garbage = new byte[512];
        new Random(7).nextBytes(garbage);
        garbage[0] = 0; // a plausible small length, so that the body is parsed as JSON and fails there
        garbage[1] = 0;
        garbage[2] = 1;
        garbage[3] = 0;
        try (FakeWorker attacker = FakeWorker.connect(coordinator.address())) {
            attacker.sendRaw(garbage);
            attacker.readUntilClosed();
        }
        eventually().until(() -> coordinator.rejected.size() == 1);
        assertThat(coordinator.rejected.get(0)).contains("protocol error");
        everyoneElseCarriesOn();
    }

    @Test
    void invalidJsonClosesOnlyThatConnection() throws IOException {
        try (FakeWorker attacker = registeredAttacker()) {
            attacker.sendRaw(FakeWorker.frame("{\"type\":\"heartbeat\",\"workerId\":"));

            assertThat(attacker.readUntilClosed()).isEmpty();
        }
        eventually().until(() -> coordinator.lost.size() == 1);
        assertThat(coordinator.lostCauses.get(0)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("not valid JSON");
        everyoneElseCarriesOn();
    }

    @Test
    void aFieldOfTheWrongTypeClosesOnlyThatConnection() throws IOException {
        try (FakeWorker attacker = registeredAttacker()) {
            attacker.sendRaw(FakeWorker.frame("{\"type\":\"failed\",\"jobId\":\"j\",\"error\":\"e\",\"retryable\":\"yes\"}"));

            assertThat(attacker.readUntilClosed()).isEmpty();
        }
        eventually().until(() -> coordinator.lost.size() == 1);
        assertThat(coordinator.lostCauses.get(0)).hasMessageContaining("retryable");
        everyoneElseCarriesOn();
    }

    @Test
    void aConnectionEndingInTheMiddleOfAFrameFailsItsJobsRetryably() throws IOException {
        FakeWorker attacker = registeredAttacker();
        RemoteWorker worker = coordinator.awaitWorker("attacker");
        CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("victim", "p"));
        attacker.nextAssign();

        attacker.sendRaw(new byte[] {0, 0, 1, 0, '{', '"'});
        attacker.socket().shutdownOutput();

        Throwable failure = failureOf(reply);
        assertThat(((ControlException) failure).isRetryable()).isTrue();
        assertThat(failure.getCause()).hasMessageContaining("middle of a frame");
        attacker.close();
        everyoneElseCarriesOn();
    }

    @Test
    void framesDribbledOneByteAtATimeStillWork() throws IOException {
        MessageCodec codec = new MessageCodec();
        try (FakeWorker slow = FakeWorker.connect(coordinator.address())) {
            slow.dribble(codec.encodeFrame(new Message.Register("slow", 1)));
            RemoteWorker worker = coordinator.awaitWorker("slow");
            Job job = TestJobs.job("j1", "one", "two");
            CompletableFuture<JobOutcome> reply = worker.dispatch(job);
            assertThat(slow.nextAssign()).isEqualTo(job);

            slow.dribble(codec.encodeFrame(new Message.Heartbeat("slow")));
            slow.dribble(codec.encodeFrame(new Message.Result(TestJobs.echo(job))));

            assertThat(reply.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo(TestJobs.echo(job));
        }
        everyoneElseCarriesOn();
    }

    @Test
    void manyFramesInOneWriteAreAllRead() throws IOException {
        MessageCodec codec = new MessageCodec();
        try (FakeWorker fast = FakeWorker.register(coordinator.address(), "fast", 50)) {
            RemoteWorker worker = coordinator.awaitWorker("fast");
            java.util.List<CompletableFuture<JobOutcome>> replies = new java.util.ArrayList<>();
            java.util.List<Job> jobs = TestJobs.jobs("burst", 50);
            for (Job job : jobs) {
                replies.add(worker.dispatch(job));
            }
            java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
            for (int i = 0; i < jobs.size(); i++) {
                Job job = fast.nextAssign();
                all.write(codec.encodeFrame(new Message.Result(TestJobs.echo(job))));
            }

            fast.sendRaw(all.toByteArray());

            for (CompletableFuture<JobOutcome> reply : replies) {
                assertThat(reply.orTimeout(10, TimeUnit.SECONDS).join().records()).hasSize(1);
            }
        }
    }
}

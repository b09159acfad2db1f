package dev.panoptes.worker;

import dev.panoptes.eval.sandbox.CommandResult;
import dev.panoptes.eval.sandbox.Sandbox;
import dev.panoptes.eval.sandbox.Sandboxes;
import dev.panoptes.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker's start-up line about its sandboxes: it says whether it can run them, and one that
 * cannot gets none (fails closed) rather than running commands unsandboxed.
 */
class WorkerSandboxesTest {
    private final LogCapture log = LogCapture.of(WorkerSandboxes.class);

    @AfterEach
    void close() {
        log.close();
    }

    @Test
    void aWorkerWithoutBubblewrapSaysSoAtStartAndHasNoSandboxes() throws InterruptedException {
        assertThat(WorkerSandboxes.check("w1", 2, "/nonexistent")).isNull();

        assertThat(log.messagesContaining("cannot run sandboxes")).singleElement().asString()
                .contains("worker=w1").contains("runs no sandboxed command").doesNotContain("this worker cannot")
                .contains("bubblewrap (bwrap) is not installed").contains("apt-get install bubblewrap");
    }

    @Test
    void aWorkerWithBubblewrapSaysHowManyAndItsSandboxesRunCommands() throws InterruptedException {
        try (Sandboxes sandboxes = WorkerSandboxes.check("w2", 3, System.getenv("PATH"))) {
            assertThat(sandboxes).isNotNull();
            assertThat(sandboxes.slots()).isEqualTo(3);
            assertThat(log.messagesContaining("sandboxes: up to 3 at once")).hasSize(1);
            try (Sandbox s = sandboxes.open()) {
                CommandResult r = s.run("echo $((6 * 7))");
                assertThat(r.output()).isEqualTo("42\n");
            }
        }
    }

    @Test
    void noSandboxesMeansNoCheck() throws InterruptedException {
        assertThat(WorkerSandboxes.check("w3", 0, "/nonexistent")).isNull();
        assertThat(log.lines()).isEmpty();
    }

    @Test
    void theCheckStartedAsideRunsOffTheCallersThreadAndItsSandboxesRunCommands() throws Exception {
        AtomicReference<String> checkedOn = new AtomicReference<>();
        try (WorkerSandboxes.Pending pending = WorkerSandboxes.start("w4", 2, System.getenv("PATH"))) {
            Sandboxes sandboxes = pending.await();

            assertThat(sandboxes).isNotNull();
            assertThat(log.eventsContaining("sandboxes: up to 2 at once")).singleElement()
                    .satisfies(e -> checkedOn.set(e.getThreadName()));
            assertThat(checkedOn.get()).isEqualTo("worker-sandbox-check");
            try (Sandbox s = sandboxes.open()) {
                assertThat(s.run("echo ok").output()).isEqualTo("ok\n");
            }
        }
    }

    @Test
    void theCheckStartedAsideFailsClosedWithoutBubblewrap() throws Exception {
        try (WorkerSandboxes.Pending pending = WorkerSandboxes.start("w5", 2, "/nonexistent")) {
            assertThat(pending.await()).isNull();
        }
        assertThat(log.messagesContaining("cannot run sandboxes")).singleElement().asString()
                .contains("worker=w5").contains("bubblewrap (bwrap) is not installed");
    }

    @Test
    void noSandboxesStartedAsideMeansNoCheckAndNoThread() throws Exception {
        try (WorkerSandboxes.Pending pending = WorkerSandboxes.start("w7", 0, "/nonexistent")) {
            assertThat(pending.await()).isNull();
        }
        assertThat(log.lines()).isEmpty();
    }
}

package dev.panoptes.report;

import dev.panoptes.cli.WorkerMain;
import dev.panoptes.demo.StubModelServer;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real agent run for the report tests: {@code eval --suite evals/agent.jsonl} against the stub
 * model playing an agent, each task's tool calls run in a bubblewrap sandbox of its own, into a
 * SQLite result database; and the other commands a user runs on that database, as the CLI runs
 * them. Needs bubblewrap ({@code bash .ci/test} installs it).
 */
final class AgentRun {
    /** The shipped agent suite. */
    static final Path SUITE = Path.of("..", "evals", "agent.jsonl").toAbsolutePath().normalize();
    /** The task the stub solves with one {@code python} call: its code, and what it prints. */
    static final String PYTHON_TASK = "agent-05-compute";
    static final String PYTHON_CODE = "print(1234 * 5678)";
    static final String PYTHON_OUTPUT = "7006652";

    private AgentRun() {
    }

    /** Runs the agent suite against a stub model of its own into {@code dir/agent.db}, and returns that file. */
    static Path evalInto(Path dir) {
        Path db = dir.resolve("agent.db");
        try (StubModelServer stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(1), 16)) {
            cli("eval", "--suite", SUITE.toString(), "--model", StubModelServer.MODEL, "--model-api",
                    stub.baseUrl().toString(), "--db", db.toString(), "--sandboxes", "2", "--no-progress");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return db;
    }

    /** Runs a {@code worker.jar} command in this JVM; it must succeed. Returns what it printed. */
    static String cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        assertThat(exit).as("worker.jar %s%nconsole:%n%s%nout:%n%s", String.join(" ", args), err, out).isZero();
        return out.toString();
    }
}

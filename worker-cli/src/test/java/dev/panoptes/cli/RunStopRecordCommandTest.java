package dev.panoptes.cli;

import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run stopped by its budget, or failed by a gate, keeps that in its database: {@code runs show}
 * and {@code report} say so later, when the exit code of the command that stopped it is gone; a
 * later sitting that completes the run cleanly clears it. {@code eval} against the stub model API.
 */
class RunStopRecordCommandTest {
    private static final String SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize().toString();
    private static final Pattern STATE = Pattern.compile("<p class=\"run-state\" data-run=\"[^\"]*\" data-state=\""
            + "([^\"]*)\">([^<]*)</p>");

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(2), 4);

    @Test
    void aRunItsBudgetStoppedSaysSoUntilASittingCompletesIt() throws Exception {
        EvalRun stopped = eval("--price", StubModelServer.MODEL + "=1000/1000", "--max-cost", "0.02", "--max-tokens",
                "4");
        assertThat(stopped.exit()).as(stopped.console()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        String run = runId(stopped);

        String show = EvalRun.of("runs", "show", "--db", db(), run).out();
        assertThat(show).contains("Run " + run + ": incomplete\nStopped by its budget: the cost budget (--max-cost)"
                + " stopped the run: 0.0000 of 0.0200 USD spent; 4 jobs not run\n");
        assertThat(EvalRun.of("runs", "--db", db()).out()).contains("incomplete (stopped by budget)");
        String[] state = reportState();
        assertThat(state[0]).isEqualTo("stopped-by-budget");
        assertThat(state[1]).startsWith("Stopped by its budget: the cost budget (--max-cost) stopped the run")
                .contains("Incomplete: 0 of 8 answers stored, 8 missing");

        EvalRun completed = eval("--price", StubModelServer.MODEL + "=1000/1000", "--max-cost", "100",
                "--max-tokens", "4");
        assertThat(completed.exit()).as(completed.console()).isZero();
        assertThat(completed.err()).contains("resuming run " + run);
        assertThat(EvalRun.of("runs", "show", "--db", db(), run).out()).startsWith("Run " + run + ": complete\n")
                .doesNotContain("Stopped");
        assertThat(EvalRun.of("runs", "--db", db()).out()).contains(" complete ").doesNotContain("stopped by");
        state = reportState();
        assertThat(state[0]).isEqualTo("complete");
        assertThat(state[1]).isEqualTo("Complete: 8 of 8 answers stored.");
    }

    @Test
    void aRunAGateFailedSaysWhichGate() throws Exception {
        EvalRun failed = eval("--fail-under", "0.9");
        assertThat(failed.exit()).as(failed.console()).isEqualTo(CoordinatorRun.EXIT_FAIL_UNDER);
        String run = runId(failed);

        assertThat(EvalRun.of("runs", "show", "--db", db(), run).out())
                .contains("Failed a gate: --fail-under 0.9 failed: " + StubModelServer.MODEL + " 0.875: exit 6\n");
        assertThat(EvalRun.of("runs", "--db", db()).out()).contains("complete (failed a gate)");
        String[] state = reportState();
        assertThat(state[0]).isEqualTo("failed-gate");
        assertThat(state[1]).isEqualTo("Failed a gate: --fail-under 0.9 failed: " + StubModelServer.MODEL
                + " 0.875: exit 6. Complete: 8 of 8 answers stored.");
    }

    private String[] reportState() throws Exception {
        Path report = dir.resolve("report.html");
        EvalRun written = EvalRun.of("report", "--db", db(), "--out", report.toString());
        assertThat(written.exit()).as(written.console()).isZero();
        Matcher m = STATE.matcher(Files.readString(report, StandardCharsets.UTF_8));
        assertThat(m.find()).isTrue();
        return new String[] {m.group(1), m.group(2)};
    }

    private static String runId(EvalRun run) {
        Matcher m = Pattern.compile("new run ([0-9a-f]{16})").matcher(run.err());
        assertThat(m.find()).as(run.console()).isTrue();
        return m.group(1);
    }

    private String db() {
        return dir.resolve("stops.db").toString();
    }

    private EvalRun eval(String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", SUITE, "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", db(), "--scorer", "numeric", "--limit", "8",
                "--job-size", "2"));
        args.addAll(List.of(more));
        return EvalRun.of(args.toArray(String[]::new));
    }
}

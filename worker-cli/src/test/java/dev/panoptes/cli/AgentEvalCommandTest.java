package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval} of the shipped sandboxed suites against the stub model, as a user runs them: the
 * agent suite's tasks are solved through the tool loop (several model turns each, commands run in
 * each sample's sandbox, checked by a command there), also as a server that sends tool calls
 * without ids and with object arguments; the code suite's answers are run against their tests,
 * and five epochs give pass@1 and pass@5 with their intervals beside accuracy.
 */
class AgentEvalCommandTest {
    private static final Path AGENT = Path.of("..", "evals", "agent.jsonl").toAbsolutePath().normalize();
    private static final Path CODE = Path.of("..", "evals", "code.jsonl").toAbsolutePath().normalize();

    /** Where the one eval of the agent suite shared by two tests keeps its database. */
    @TempDir
    static Path shared;
    private static AgentEval modelRun;

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 64);

    @Test
    void theAgentSuitesTasksAreSolvedThroughTheToolLoopAndCheckedInTheirSandboxes() throws Exception {
        for (String model : new String[] {StubModelServer.MODEL, StubModelServer.SMALL_MODEL}) {
            AgentEval run = model.equals(StubModelServer.MODEL) ? agentEvalOfTheModel(stub)
                    : AgentEval.run(model, stub, dir.resolve(model + ".db"));

            assertThat(run.exit()).as("console:%n%s%nsummary:%n%s", run.err(), run.out()).isZero();
            // Every task takes the script's commands, one model turn each, then an answer.
            assertThat(run.modelTurns()).as("model turns").isGreaterThanOrEqualTo(8 * 2 + 1);
            // Scored by each task's check in its sandbox (or the two computing tasks' own numeric
            // scorer), whatever the run's text scorer (exact), which scored nothing.
            assertThat(run.out()).contains("8 of 8 stored, 0 missing")
                    .contains("accuracy (check and numeric, scoring 1)").doesNotContain("exact")
                    .contains(model + ": 1.000 (95% CI");
            try (JdbcResultStore store = JdbcResultStore.openSqlite(run.db())) {
                assertThat(store.recordCount()).isEqualTo(8);
            }
        }
    }

    @Test
    void rescoringKeepsTheVerdictsOfTheSandboxChecksAndRescoresOnlyTheOtherAnswers() throws Exception {
        AgentEval run = agentEvalOfTheModel(stub);
        assertThat(run.exit()).as("console:%n%s%nsummary:%n%s", run.err(), run.out()).isZero();
        // Rescored in a copy of its own: the run stays as the eval left it, for the other test.
        Path db = Files.copy(run.db(), dir.resolve("agent.db"));
        Path wal = run.db().resolveSibling(run.db().getFileName() + "-wal");
        if (Files.exists(wal)) {
            Files.copy(wal, dir.resolve("agent.db-wal"));
        }

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"rescore", "--db", db.toString(), "--scorer", "includes"},
                new PrintWriter(out, true), new PrintWriter(err, true), Map.of());

        assertThat(exit).as("console:%n%s%nout:%n%s", err, out).isZero();
        // Six tasks are checked by a command in their sandbox; two (computing) by their answer.
        assertThat(out.toString()).contains("scoring 2 made with includes: 8 answers scored again")
                .contains("6 answers scored by a sandbox check keep the check's verdict: a check ran in the"
                        + " sample's sandbox, which is gone, so it cannot run again; to check anew, run the suite"
                        + " again")
                .contains("accuracy (includes and check, scoring 2)")
                .contains(StubModelServer.MODEL + ": 1.000 (95% CI 0.676-1.000, SE 0.000, n=8)");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            List<String> scorers = new ArrayList<>();
            store.forEachRecord(r -> scorers.add(r.score().scorer() + " " + r.score().score()));
            assertThat(scorers).containsOnly("check 1.0", "includes 1.0").filteredOn(s -> s.startsWith("check"))
                    .hasSize(6);
        }
    }

    @Test
    void theCodeSuiteOverFiveEpochsPrintsPass1AndPass5WithIntervals() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", CODE.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("code.db").toString(), "--epochs", "5",
                "--sandboxes", "4", "--no-progress"}, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());

        assertThat(exit).as("console:%n%s%nsummary:%n%s", err, out).isZero();
        String summary = out.toString();
        assertThat(summary).contains("60 of 60 stored").contains("accuracy (check, scoring 1)")
                .contains("pass@k over epochs, unbiased estimator of Chen et al. (2021), 95% CI: Wilson over problems");
        Matcher m = Pattern.compile(StubModelServer.MODEL + ": pass@1 ([0-9.]+) \\(95% CI ([0-9.]+)-([0-9.]+)\\),"
                + " pass@5 ([0-9.]+) \\(95% CI ([0-9.]+)-([0-9.]+)\\), 12 problems").matcher(summary);
        assertThat(m.find()).as(summary).isTrue();
        double pass1 = Double.parseDouble(m.group(1));
        double pass5 = Double.parseDouble(m.group(4));
        // The stub answers prose without code about three times in ten: those fail their tests.
        assertThat(pass1).isBetween(0.4, 0.95);
        assertThat(pass5).isGreaterThanOrEqualTo(pass1);
        assertThat(Double.parseDouble(m.group(2))).isLessThan(pass1);
        assertThat(Double.parseDouble(m.group(3))).isGreaterThan(pass1);
        // pass@1 over epochs is the mean score: the accuracy line says the same.
        assertThat(summary).contains(StubModelServer.MODEL + ": " + m.group(1) + " (95% CI");
    }

    /**
     * The agent suite's eval of {@link StubModelServer#MODEL}, run once per class (against the stub
     * of the test that asks first) and read by both the eval test and the rescoring test: the agent
     * suite's sandboxed commands are most of this class's time, and neither test changes the run.
     */
    private static synchronized AgentEval agentEvalOfTheModel(StubModelApi stub) throws IOException {
        if (modelRun == null) {
            modelRun = AgentEval.run(StubModelServer.MODEL, stub, Files.createDirectories(shared.resolve("model"))
                    .resolve("agent.db"));
        }
        return modelRun;
    }

    /** An {@code eval} of the agent suite: its exit code, console, summary, model turns and database. */
    private record AgentEval(int exit, String out, String err, long modelTurns, Path db) {
        static AgentEval run(String model, StubModelApi stub, Path db) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            long before = stub.requestCount();
            int exit = WorkerMain.run(new String[] {"eval", "--suite", AGENT.toString(), "--model", model,
                    "--model-api", stub.baseUrl().toString(), "--db", db.toString(), "--sandboxes", "4",
                    "--no-progress"}, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
            return new AgentEval(exit, out.toString(), err.toString(), stub.requestCount() - before, db);
        }
    }
}

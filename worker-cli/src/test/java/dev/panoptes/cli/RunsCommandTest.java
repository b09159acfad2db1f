package dev.panoptes.cli;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.coordinator.DatabaseLock;
import dev.panoptes.coordinator.RunSummary;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code runs}, {@code runs show} and {@code runs delete} on a SQLite database holding two runs. */
class RunsCommandTest {
    private static final RunManifest MANIFEST = new RunManifest(RunManifest.FORMAT, "1.2.3", "evals/math.jsonl",
            "ab".repeat(32), 2, List.of("m"), "Answer with a number.", 0.7, 256, 42L, 1, null, null, 2, "nightly");
    /** Complete: both answers stored (one right), finished. */
    private static final String DONE = MANIFEST.runId();
    /** Incomplete (one answer of three), legacy (no manifest), started later; its id shares DONE's first 8 characters. */
    private static final String HALF = DONE.substring(0, 8) + "00000000";

    @TempDir
    Path dir;

    private Path db;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @BeforeEach
    void storeTwoRuns() {
        db = dir.resolve("runs.db");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring("exact"))) {
            store.recordRun(RunEntry.of(MANIFEST, "exact", Instant.parse("2026-12-01T10:00:00.250Z")));
            store.record(job(DONE, "q1", "q2"), outcome(DONE, "4", "5"), "w1");
            store.finishRun(DONE);
            store.recordRun(new RunEntry(HALF, "evals/other.jsonl", List.of("m"), "exact", 1, 3,
                    Instant.parse("2026-12-01T11:00:00Z")));
            store.record(job(HALF, "q1"), outcome(HALF, "4"), "w1");
        }
    }

    private static Job job(String run, String... ids) {
        List<Vignette> vignettes = new ArrayList<>();
        for (String id : ids) {
            vignettes.add(new Vignette(id, "2+2?", "4", Map.of()));
        }
        return new Job(JobId.of(run + "-m-e0-0000"), new EvalSpec("s", vignettes, SpecParams.NONE.withModel("m")),
                run, 0);
    }

    private static JobOutcome outcome(String run, String... answers) {
        List<ResponseRecord> records = new ArrayList<>();
        for (int i = 0; i < answers.length; i++) {
            records.add(new ResponseRecord("q" + (i + 1), answers[i]));
        }
        return new JobOutcome(JobId.of(run + "-m-e0-0000"), records);
    }

    @Test
    void listsEachRunWithItsSuiteModelsCreationStateAnswersAndAccuracyLatestFirst() {
        assertThat(execute("runs", "--db", db.toString())).isZero();
        List<String> lines = out.toString().lines().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).matches("RUN +SUITE +MODELS +CREATED +STATE +ANSWERS +ACCURACY");
        assertThat(lines.get(1)).matches(HALF + " +evals/other\\.jsonl +m +2026-12-01T11:00:00Z +incomplete +1/3 +m 1\\.000");
        assertThat(lines.get(2)).matches(DONE + " +evals/math\\.jsonl +m +2026-12-01T10:00:00Z +complete +2/2 +m 0\\.500");

        out.getBuffer().setLength(0);
        assertThat(execute("runs", "--db", db.toString(), "--run", DONE)).isZero();
        assertThat(out.toString().lines()).hasSize(2).last().asString().startsWith(DONE);
    }

    @Test
    void showPrintsEveryRecordedParameterAndTheSummaryWithTheCoordinatorsAccuracyLines() {
        assertThat(execute("runs", "show", DONE, "--db", db.toString())).isZero();
        StringBuilder accuracy = new StringBuilder();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            RunSummary.renderAccuracy(accuracy, RunStats.of(RunDataLoader.load(store, DONE), null));
        }
        assertThat(out.toString()).startsWith("Run " + DONE + ": complete\nManifest:\n")
                .containsPattern("  Temperature: +0\\.7\n").containsPattern("  Label: +nightly\n")
                .containsPattern("  System prompt: +Answer with a number\\.\n")
                .containsPattern("  Suite hash \\(SHA-256\\): +" + "ab".repeat(32) + "\n")
                .containsPattern("  Tool version: +1\\.2\\.3\n")
                .contains("Summary:\n  answers:     2 of 2 stored\n  failed jobs: 0\n")
                .endsWith(accuracy.toString());
        assertThat(accuracy.toString()).contains("    m: 0.500");

        out.getBuffer().setLength(0);
        assertThat(execute("runs", "show", HALF, "--db", db.toString())).isZero();
        assertThat(out.toString()).startsWith("Run " + HALF + ": incomplete\n")
                .containsPattern("  Temperature: +not recorded\n").contains("  answers:     1 of 3 stored, 2 missing\n");
    }

    @Test
    void deleteWithYesRemovesTheRunAndLeavesTheOther() {
        assertThat(execute("runs", "delete", DONE, "--yes", "--db", db.toString())).isZero();
        assertThat(out.toString()).isEqualTo("deleted run " + DONE + ": 2 answers, 2 scores in 1 scoring, its manifest\n");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.runs()).extracting(RunEntry::runId).containsExactly(HALF);
            assertThat(store.recordCount(DONE)).isZero();
            assertThat(store.recordCount(HALF)).isEqualTo(1);
        }
        err.getBuffer().setLength(0);
        assertThat(execute("runs", "delete", DONE, "--yes", "--db", db.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("holds no run '" + DONE + "'");
    }

    @Test
    void deleteWithoutYesIsRefusedWhenNobodyCanConfirmAndAskedOnATerminal() {
        assertThat(execute("runs", "delete", DONE, "--db", db.toString())).as("the tests' input is no terminal")
                .isEqualTo(2);
        assertThat(err.toString()).contains("pass --yes to delete it without asking");
        err.getBuffer().setLength(0);

        assertThat(run(prompt(false, null), "delete", DONE, "--db", db.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("run " + DONE + " is not deleted: standard input is not a terminal")
                .contains("pass --yes");

        assertThat(run(prompt(true, "n"), "delete", DONE, "--db", db.toString())).isEqualTo(1);
        assertThat(out.toString()).contains("run " + DONE + ": suite evals/math.jsonl, models m, created"
                + " 2026-12-01T10:00:00Z, 2/2 answers stored").endsWith("run " + DONE + " is not deleted\n");
        assertThat(recordCount(DONE)).isEqualTo(2);

        assertThat(run(prompt(true, "yes"), "delete", HALF, "--db", db.toString())).isZero();
        assertThat(out.toString()).endsWith("deleted run " + HALF + ": 1 answer, 1 score in 1 scoring, its manifest\n");
        assertThat(recordCount(HALF)).isZero();
        assertThat(recordCount(DONE)).isEqualTo(2);
    }

    @Test
    @SuppressWarnings("try") // the lock stands for a coordinator, held, not used
    void aRunningCoordinatorsRunShowsAsRunningAndIsNotDeleted() throws Exception {
        try (DatabaseLock coordinator = DatabaseLock.acquire(db, new InetSocketAddress("127.0.0.1", 7070))) {
            assertThat(execute("runs", "--db", db.toString())).isZero();
            assertThat(out.toString().lines().toList().get(1)).startsWith(HALF).contains(" running ");

            assertThat(execute("runs", "delete", HALF, "--yes", "--db", db.toString())).isEqualTo(1);
            assertThat(err.toString()).contains("is in use by a coordinator (pid " + ProcessHandle.current().pid())
                    .contains("listening on 127.0.0.1:7070").contains("stop it or let it finish, then delete the run");
            assertThat(recordCount(HALF)).isEqualTo(1);
        }
        assertThat(execute("runs", "delete", HALF, "--yes", "--db", db.toString())).isZero();
        assertThat(recordCount(HALF)).isZero();
    }

    @Test
    @SuppressWarnings("try") // the lock stands for a coordinator, held, not used
    void rescoreOfARunACoordinatorHoldsIsRefusedAndAddsNoScoring() throws Exception {
        try (DatabaseLock coordinator = DatabaseLock.acquire(db, new InetSocketAddress("127.0.0.1", 7070))) {
            assertThat(execute("rescore", "--run", HALF, "--scorer", "normalized", "--db", db.toString()))
                    .isEqualTo(1);
            assertThat(err.toString()).contains("is in use by a coordinator (pid " + ProcessHandle.current().pid())
                    .contains("stop it or let it finish, then rescore it");
        }
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.scorings(HALF)).hasSize(1);
        }
        assertThat(execute("rescore", "--run", HALF, "--scorer", "normalized", "--db", db.toString())).isZero();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.scorings(HALF)).hasSize(2);
        }
    }

    @Test
    void anUnknownIdAnAmbiguousPrefixAndAMissingIdAreUsageErrors() {
        assertThat(execute("runs", "show", "ffffffff", "--db", db.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for positional parameter 'ID': the database holds no run"
                + " 'ffffffff'");
        err.getBuffer().setLength(0);
        assertThat(execute("runs", "delete", DONE.substring(0, 8), "--yes", "--db", db.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("'" + DONE.substring(0, 8) + "' starts 2 runs of the database");
        err.getBuffer().setLength(0);
        assertThat(execute("runs", "delete", "--yes", "--db", db.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required parameter: 'ID'");
        err.getBuffer().setLength(0);
        assertThat(execute("runs", "--db", dir.resolve("none.db").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no such file");
        assertThat(recordCount(DONE)).isEqualTo(2);
        assertThat(recordCount(HALF)).isEqualTo(1);
    }

    private long recordCount(String run) {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            return store.recordCount(run);
        }
    }

    private int execute(String... args) {
        return WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }

    /** {@code runs ARGS} with this prompt, set up as {@code worker.jar} sets up its commands. */
    private int run(Prompt prompt, String... args) {
        CommandLine cmd = RunsCommand.commandLine(prompt);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        cmd.setParameterExceptionHandler(CliErrors.USAGE);
        cmd.setExecutionExceptionHandler(CliErrors.RUNTIME);
        return cmd.execute(args);
    }

    private static Prompt prompt(boolean interactive, String answer) {
        return new Prompt() {
            @Override
            public boolean interactive() {
                return interactive;
            }

            @Override
            public String ask(String question) {
                assertThat(question).endsWith("and everything stored for it? [y/N] ");
                return answer;
            }
        };
    }
}

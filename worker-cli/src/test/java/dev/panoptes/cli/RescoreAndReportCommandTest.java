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
import dev.panoptes.control.store.StoredRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code rescore} and {@code report} on a database a run wrote. */
class RescoreAndReportCommandTest {
    private static final String RUN = "0123456789abcdef";

    @TempDir
    Path dir;

    private Path db;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @BeforeEach
    void storeARunScoredByExactMatch() {
        db = dir.resolve("r.db");
        List<Vignette> vignettes = List.of(new Vignette("q1", "2+2?", "4", Map.of("topic", "math")),
                new Vignette("q2", "Capital of France?", "Paris", Map.of("topic", "geo")),
                new Vignette("q3", "Say hi", null, Map.of()));
        Job job = new Job(JobId.of(RUN + "-m-e0-0000"), new EvalSpec("s", vignettes, SpecParams.NONE.withModel("m")),
                RUN, 0);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring("exact"))) {
            store.recordRun(new RunEntry(RUN, "s.jsonl", List.of("m"), "exact", 1, 3, Instant.EPOCH));
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("q1", "4."),
                    new ResponseRecord("q2", "The answer is Paris"), new ResponseRecord("q3", "hi"))), "w1");
        }
    }

    @Test
    void rescoringAddsAScoringKeepsTheEarlierOnesAndPrintsTheNewAccuracyWithItsGroups() {
        assertThat(scores(0)).containsExactly(0.0, 0.0, null);

        assertThat(execute("rescore", "--db", db.toString(), "--scorer", "normalized", "--group-by", "topic"))
                .isZero();
        assertThat(out.toString()).contains("run " + RUN + ": scoring 2 made with normalized: 3 answers scored again;"
                        + " scoring 1 (exact) is kept: --scoring 1 shows it")
                .contains("  accuracy (normalized, scoring 2)")
                .contains("    m: 0.500").contains("; 1 answer unscored")
                .contains("      topic=math: 1.000").contains("      topic=geo: 0.000");
        assertThat(scores(0)).containsExactly(1.0, 0.0, null);
        assertThat(scores(1)).as("scoring 1 is kept as it was").containsExactly(0.0, 0.0, null);

        out.getBuffer().setLength(0);
        assertThat(execute("rescore", "--db", db.toString(), "--scorer", "includes", "--run", RUN)).isZero();
        assertThat(out.toString()).contains("scoring 3 made with includes").contains("scoring 2 (normalized) is kept")
                .contains("    m: 1.000").doesNotContain("topic=");
        assertThat(scores(0)).containsExactly(1.0, 1.0, null);
        assertThat(scores(2)).containsExactly(1.0, 0.0, null);
        assertThat(scores(1)).containsExactly(0.0, 0.0, null);
    }

    @Test
    void resultsAndReportShowTheScoringAskedForAndNameTheScoringsARunHasWhenItHasNotThatOne() throws Exception {
        assertThat(execute("rescore", "--db", db.toString(), "--scorer", "includes")).isZero();
        out.getBuffer().setLength(0);

        assertThat(execute("results", "--db", db.toString())).isZero();
        assertThat(out.toString().lines()).hasSize(3).allSatisfy(line -> assertThat(line).endsWith(",\"scoring\":2}"))
                .first().satisfies(line -> assertThat(line).contains("\"score\":1.0"));
        out.getBuffer().setLength(0);
        assertThat(execute("results", "--db", db.toString(), "--scoring", "1")).isZero();
        assertThat(out.toString().lines()).hasSize(3).allSatisfy(line -> assertThat(line).endsWith(",\"scoring\":1}"))
                .first().satisfies(line -> assertThat(line).contains("\"score\":0.0"));
        out.getBuffer().setLength(0);
        assertThat(execute("results", "--db", db.toString(), "--scoring", "1", "--format", "csv")).isZero();
        List<String> csv = out.toString().lines().toList();
        assertThat(csv.get(0)).endsWith(",workerId,error,scoring,cached,cachedFrom,costUsd");
        assertThat(csv.subList(1, csv.size())).hasSize(3).allSatisfy(row -> assertThat(row).endsWith(",1,false,,"));

        assertThat(execute("results", "--db", db.toString(), "--scoring", "3")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--scoring': run " + RUN + " has no scoring 3;"
                + " it has scorings 1 (exact, run, ").contains("2 (includes, rescore, ");
        err.getBuffer().setLength(0);
        assertThat(execute("report", "--db", db.toString(), "--scoring", "-1")).isEqualTo(2);
        assertThat(err.toString()).contains("scorings are numbered from 1");

        Path report = dir.resolve("first.html");
        assertThat(execute("report", "--db", db.toString(), "--scoring", "1", "--out", report.toString())).isZero();
        err.getBuffer().setLength(0);
        assertThat(execute("report", "--db", db.toString(), "--scoring", "4", "--out", report.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("has no scoring 4");
    }

    @Test
    void rescoreRefusesAJudgeAScorerThatDoesNotExistAndARunThatIsNotThere() {
        assertThat(execute("rescore", "--db", db.toString(), "--scorer", "judge:gpt-4o")).isEqualTo(2);
        assertThat(err.toString()).contains("judge:gpt-4o is model-graded and needs the fleet");

        err.getBuffer().setLength(0);
        assertThat(execute("rescore", "--db", db.toString(), "--scorer", "fuzzy")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--scorer'").contains("fuzzy");

        err.getBuffer().setLength(0);
        assertThat(execute("rescore", "--db", db.toString(), "--scorer", "exact", "--run", "nope")).isEqualTo(2);
        assertThat(err.toString()).contains("the database holds no run 'nope'; it holds " + RUN);
        assertThat(scores(0)).containsExactly(0.0, 0.0, null);
    }

    @Test
    void theReportIsOneFileThatNeedsNothingElseAndSaysWhereItIs() throws Exception {
        Path report = dir.resolve("out.html");

        assertThat(execute("report", "--db", db.toString(), "--out", report.toString())).isZero();

        assertThat(out.toString()).startsWith("wrote " + report + ": 1 run, 3 answers, ")
                .contains("open it in a browser: " + report.toUri());
        String html = Files.readString(report);
        assertThat(html).contains("<title>").contains(RUN).doesNotContain("<link").doesNotContain(" src=");
        assertThat(html.replace(report.toUri().toString(), "")).doesNotContain("http://").doesNotContain("https://");
    }

    @Test
    void theReportRefusesAFolderThatDoesNotExistAndAMissingDatabase() {
        assertThat(execute("report", "--db", db.toString(), "--out", dir.resolve("no/such/r.html").toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--out': the folder");

        err.getBuffer().setLength(0);
        assertThat(execute("report", "--db", dir.resolve("none.db").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no such file: " + dir.resolve("none.db"));
        assertThat(dir.resolve("none.db")).doesNotExist();
    }

    /** The scores of the run's answers in one scoring (0: the latest), in storage order. */
    private List<Double> scores(int scoring) {
        List<Double> scores = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(RUN, scoring, (StoredRecord r) -> scores.add(r.score() == null ? null
                    : r.score().score()));
        }
        return scores;
    }

    private int execute(String... args) {
        return WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }
}

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
import dev.panoptes.control.store.TestPostgres;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunLocks;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code runs} and {@code runs delete} on a real PostgreSQL server ({@link TestPostgres}), where
 * each run has a lock of its own: the run a coordinator holds shows as running and is not
 * deleted, while another run of the same database is.
 */
class PostgresRunsCommandTest {
    private static final String HELD = "1111111111111111";
    private static final String FREE = "2222222222222222";

    private final TestPostgres.Database db = TestPostgres.freshDatabase();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private DatabaseTarget target;
    private String url;
    private Path passwordFile;

    @TempDir
    Path dir;

    @BeforeEach
    void storeTwoRuns() throws Exception {
        url = "postgresql://" + db.user() + "@" + db.url().substring("jdbc:postgresql://".length());
        target = ((DatabaseTarget.Postgres) DatabaseTarget.parse(url)).withPassword(db.password());
        passwordFile = Files.writeString(dir.resolve("password"), db.password() + "\n");
        try (JdbcResultStore store = db.open().withScoring(new RunScoring("exact"))) {
            for (String run : List.of(HELD, FREE)) {
                store.recordRun(new RunEntry(run, "s.jsonl", List.of("m"), "exact", 1, 1, Instant.EPOCH));
                Job job = new Job(JobId.of(run + "-m-e0-0000"), new EvalSpec("s",
                        List.of(new Vignette("q1", "2+2?", "4", Map.of())), SpecParams.NONE.withModel("m")), run, 0);
                store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("q1", "4"))), "w1");
            }
        }
    }

    @Test
    @SuppressWarnings("try") // the hold stands for a coordinator, held, not used
    void theRunACoordinatorHoldsIsRunningAndKeptWhileAnotherIsDeleted() throws Exception {
        try (RunLocks.Hold coordinator = RunLocks.exclusive(target, HELD)) {
            assertThat(RunLocks.running(target, List.of(entry(HELD), entry(FREE)))).containsExactly(HELD);
            assertThatThrownBy(() -> RunLocks.exclusive(target, HELD)).isInstanceOf(RunLocks.InUseException.class)
                    .hasMessageContaining("run " + HELD + " in " + target + " is being run by a coordinator (panoptes")
                    .hasMessageNotContaining(db.password());

            assertThat(execute("runs")).isZero();
            assertThat(out.toString()).containsPattern(HELD + " .* running ").containsPattern(FREE + " .* complete ");

            assertThat(execute("runs", "delete", HELD, "--yes")).isEqualTo(1);
            assertThat(err.toString()).contains("is being run by a coordinator").contains("then delete the run");
            assertThat(execute("runs", "delete", FREE, "--yes")).isZero();
        }
        assertThat(RunLocks.running(target, List.of(entry(HELD)))).isEmpty();
        try (JdbcResultStore store = db.open()) {
            assertThat(store.runs()).extracting(RunEntry::runId).containsExactly(HELD);
            assertThat(store.recordCount(HELD)).isEqualTo(1);
            assertThat(store.recordCount(FREE)).isZero();
        }
    }

    private static RunEntry entry(String run) {
        return new RunEntry(run, "s.jsonl", List.of("m"), "exact", 1, 1, Instant.EPOCH);
    }

    private int execute(String... args) {
        String[] all = new String[args.length + 4];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(new String[] {"--db", url, "--db-password-file", passwordFile.toString()}, 0, all,
                args.length, 4);
        return WorkerMain.run(all, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }
}

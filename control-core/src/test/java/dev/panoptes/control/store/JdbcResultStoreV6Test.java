package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schema version 6 on SQLite: what each sitting of a run spent on answers never stored is kept with
 * the sitting when it ends (by {@code endSitting} or {@code finishRun}), read back per sitting and
 * added up over the run, replaced rather than added when noted twice, removed with the run; a
 * version 5 database is upgraded, its runs and answers kept, its sittings without such spend.
 */
class JdbcResultStoreV6Test extends SqliteFileStoreTest {
    static final String RUN = "cccccccccccccccc";
    static final String OTHER = "dddddddddddddddd";

    @Test
    void eachSittingKeepsItsUnstoredSpendAndTheRunAddsThemUp() {
        checkUnstoredSpendPerSittingAndInAll(this::open);
    }

    @Test
    void deletingARunRemovesItsUnstoredSpendAndNoOthers() {
        checkDeletionRemovesTheUnstoredSpend(this::open);
    }

    @Test
    void aVersion5DatabaseIsUpgradedItsRunsAndAnswersKept() throws Exception {
        checkUpgradeFromVersion5(this::execute, this::open);
        try (Connection c = plain();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT MAX(version) FROM panoptes_schema")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(JdbcResultStore.SCHEMA_VERSION).isGreaterThanOrEqualTo(6);
        }
    }

    static RunEntry start(String run, long at) {
        return new RunEntry(run, "s.jsonl", List.of("a", "b"), "exact", 1, 4, Instant.ofEpochMilli(at));
    }

    static void answer(JdbcResultStore store, String run, String id) {
        Job job = new Job(JobId.of(run + "-" + id), new EvalSpec("s", List.of(new Vignette("v-" + id, "q")),
                SpecParams.NONE.withModel("a")), run, 0);
        store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("v-" + id, "x", "a", "stop", 5L,
                new Usage(10, 2)))), "w1");
    }

    /**
     * Two sittings of a run: the first interrupted (its spend noted twice, growing: kept once, as
     * last noted), the second finished; each reads back its own, the run's total adds them up per
     * model, another run's stays apart, and all of it survives reopening. Shared with
     * {@link PostgresResultStoreTest}.
     */
    static void checkUnstoredSpendPerSittingAndInAll(Supplier<JdbcResultStore> open) {
        try (JdbcResultStore store = open.get()) {
            assertThat(store.unstoredSpend(RUN)).as("a run the store does not hold").isEmpty();
            store.recordRun(start(RUN, 1_000));
            answer(store, RUN, "j1");
            store.endSitting(RUN, List.of(new UnstoredSpend("a", 1, 100, 10)));
            // Noted again with the sitting's grown figures (a shutdown after an ending): replaced, not added.
            store.endSitting(RUN, List.of(new UnstoredSpend("a", 2, 300, 30), new UnstoredSpend("b", 1, 50, 5),
                    new UnstoredSpend("c", 0, 0, 0)));

            store.recordRun(start(OTHER, 1_500));
            store.finishRun(OTHER, List.of(new UnstoredSpend("a", 7, 700, 70)));

            store.recordRun(start(RUN, 2_000));
            answer(store, RUN, "j2");
            store.finishRun(RUN, List.of(new UnstoredSpend("b", 1, 40, 4)));
        }
        try (JdbcResultStore store = open.get()) {
            RunEntry run = store.runs().stream().filter(r -> r.runId().equals(RUN)).findFirst().orElseThrow();
            assertThat(run.finishedAt()).isNotNull();
            assertThat(run.sittings()).extracting(RunSitting::unstored).containsExactly(
                    List.of(new UnstoredSpend("a", 2, 300, 30), new UnstoredSpend("b", 1, 50, 5)),
                    List.of(new UnstoredSpend("b", 1, 40, 4)));
            assertThat(store.unstoredSpend(RUN)).containsExactly(new UnstoredSpend("a", 2, 300, 30),
                    new UnstoredSpend("b", 2, 90, 9));
            assertThat(RunSitting.unstored(run.sittings())).containsExactly(new UnstoredSpend("a", 2, 300, 30),
                    new UnstoredSpend("b", 2, 90, 9));
            assertThat(store.unstoredSpend(OTHER)).containsExactly(new UnstoredSpend("a", 7, 700, 70));

            // The old signatures keep nothing, and take nothing away.
            store.endSitting(RUN);
            store.finishRun(RUN);
            assertThat(store.unstoredSpend(RUN)).containsExactly(new UnstoredSpend("a", 2, 300, 30),
                    new UnstoredSpend("b", 2, 90, 9));
        }
    }

    /** Deleting a run removes its unstored spend, leaves another run's, and a run noted again starts at none. */
    static void checkDeletionRemovesTheUnstoredSpend(Supplier<JdbcResultStore> open) {
        try (JdbcResultStore store = open.get()) {
            store.recordRun(start(RUN, 1_000));
            answer(store, RUN, "j1");
            store.endSitting(RUN, List.of(new UnstoredSpend("a", 1, 100, 10)));
            store.recordRun(start(OTHER, 1_000));
            store.endSitting(OTHER, List.of(new UnstoredSpend("b", 3, 30, 3)));

            assertThat(store.deleteRun(RUN).noted()).isTrue();

            assertThat(store.unstoredSpend(RUN)).isEmpty();
            assertThat(store.unstoredSpend(OTHER)).containsExactly(new UnstoredSpend("b", 3, 30, 3));
            store.recordRun(start(RUN, 5_000));
            store.endSitting(RUN, List.of());
            assertThat(store.runs().stream().filter(r -> r.runId().equals(RUN)).findFirst().orElseThrow().sittings())
                    .singleElement().satisfies(s -> {
                        assertThat(s.number()).isEqualTo(1);
                        assertThat(s.unstored()).isEmpty();
                    });
            assertThat(store.unstoredSpend(RUN)).isEmpty();
        }
    }

    /**
     * A version 5 database (the current one without {@code panoptes_unstored}) opens upgraded: its
     * run, sitting and answer are kept, the sitting without unstored spend; a sitting ended now
     * keeps its own. Shared with {@link PostgresResultStoreTest}.
     */
    static void checkUpgradeFromVersion5(JdbcResultStoreV5Test.Sql sql, Supplier<JdbcResultStore> open)
            throws Exception {
        try (JdbcResultStore store = open.get()) {
            store.recordRun(start(RUN, 1_000));
            answer(store, RUN, "j1");
            store.endSitting(RUN);
        }
        sql.execute("DROP TABLE panoptes_unstored", "UPDATE panoptes_schema SET version = 5");

        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount(RUN)).isEqualTo(1);
            RunEntry run = store.runs().get(0);
            assertThat(run.runId()).isEqualTo(RUN);
            assertThat(run.sittings()).singleElement().satisfies(s -> {
                assertThat(s.answers()).isEqualTo(1);
                assertThat(s.ended()).isTrue();
                assertThat(s.unstored()).isEmpty();
            });
            assertThat(store.unstoredSpend(RUN)).isEmpty();
            store.recordRun(start(RUN, 2_000));
            store.finishRun(RUN, List.of(new UnstoredSpend("a", 1, 100, 10)));
        }
        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount()).as("opened again: nothing upgraded twice or lost").isEqualTo(1);
            assertThat(store.runs().get(0).sittings()).extracting(RunSitting::unstored)
                    .containsExactly(List.of(), List.of(new UnstoredSpend("a", 1, 100, 10)));
            assertThat(store.unstoredSpend(RUN)).containsExactly(new UnstoredSpend("a", 1, 100, 10));
        }
    }
}

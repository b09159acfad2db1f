package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.RequestKey;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schema version 7 on SQLite ({@link RequestKeyIndex}): no index on the request key; the answers
 * are keyed in bulk when a sitting ends and before the cache looks, so that an answer of a sitting
 * that never ended (killed) is found, and so is one stored after a run's deletion or after the
 * records' rowids were renumbered while the store was closed; a stale key entry never yields an
 * answer; a version 6 database is upgraded with every answer keyed and its index dropped.
 */
class JdbcResultStoreV7Test extends SqliteFileStoreTest {
    private static final SpecParams ZERO = new SpecParams(null, 0.0, null, null, "m").withModelSource("model-id test");

    private long number(String query) throws Exception {
        try (Connection c = plain(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Vignette vignette(String run, int i) {
        return new Vignette("v" + i, run + " question " + i);
    }

    private static Job job(String run, int i) {
        return new Job(JobId.of(run + "-m-e0-" + String.format("%04d", i)),
                new EvalSpec("s", List.of(vignette(run, i)), ZERO), run, 0);
    }

    private static String key(String run, int i) {
        return RequestKey.of(job(run, i), vignette(run, i));
    }

    /** Stores answers 0 to count - 1 of a run, one job each, its answer naming the run. */
    private static List<String> answer(JdbcResultStore store, String run, int count) {
        store.recordRun(new RunEntry(run, "s.jsonl", List.of("m"), "exact", 1, count, Instant.ofEpochMilli(1_000)));
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Job job = job(run, i);
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("v" + i, "answer of " + run))),
                    "w1");
            keys.add(key(run, i));
        }
        return keys;
    }

    private static Map<String, CachedAnswer> lookUp(JdbcResultStore store, List<String> keys) {
        return store.answerCache().lookUp(keys, Instant.EPOCH);
    }

    private static void assertFound(JdbcResultStore store, List<String> keys, String run) {
        Map<String, CachedAnswer> found = lookUp(store, keys);
        assertThat(found).as("answers of run " + run).containsOnlyKeys(keys);
        assertThat(found.values()).allSatisfy(a -> {
            assertThat(a.runId()).isEqualTo(run);
            assertThat(a.answer().response()).isEqualTo("answer of " + run);
        });
    }

    @Test
    void noIndexOnTheRequestKeyAndASittingsAnswersAreKeyedWhenItEnds() throws Exception {
        try (JdbcResultStore store = open()) {
            answer(store, "aaaa", 3);
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).as("not keyed per insert").isZero();
            store.endSitting("aaaa");
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(3);
            answer(store, "bbbb", 2);
            store.finishRun("bbbb");
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(5);
            assertThat(number("SELECT through FROM panoptes_request_key_mark"))
                    .isEqualTo(number("SELECT MAX(rowid) FROM panoptes_records"));
        }
        assertThat(number("SELECT COUNT(*) FROM sqlite_master WHERE name = 'panoptes_records_request_key'")).isZero();
    }

    @Test
    void theAnswersOfASittingThatNeverEndedAreFoundByTheNextLookup() throws Exception {
        checkUnendedSittingsAnswersFound(this::open, () ->
                assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).as("nothing keyed yet").isZero());
    }

    /** Opening a store keys nothing (a report or an export opens it and never looks answers up): the lookup does. */
    @Test
    void openingAStoreKeysNothingTheLookupDoes() throws Exception {
        List<String> keys;
        try (JdbcResultStore store = open()) {
            keys = answer(store, "aaaa", 3);
        }
        try (JdbcResultStore store = open()) {
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isZero();
            assertFound(store, keys, "aaaa");
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(3);
        }
    }

    /**
     * A sitting closed without endSitting or finishRun, as a coordinator killed with kill -9 leaves
     * it: the next lookup finds its answers, and those of a sitting still going. {@code closed} runs
     * between the two. Shared with {@link PostgresResultStoreTest}.
     */
    static void checkUnendedSittingsAnswersFound(Supplier<JdbcResultStore> open, Check closed) throws Exception {
        List<String> keys;
        try (JdbcResultStore store = open.get()) {
            keys = answer(store, "aaaa", 4);
        }
        closed.run();
        try (JdbcResultStore store = open.get()) {
            assertFound(store, keys, "aaaa");
            List<String> more = answer(store, "bbbb", 2);
            assertFound(store, more, "bbbb");
        }
    }

    /** An assertion that may read the database. */
    interface Check {
        void run() throws Exception;
    }

    @Test
    void afterDeletingTheRunWithTheHighestRowidANewRunsAnswersAreFound() throws Exception {
        checkNewAnswersFoundAfterDeletingTheLastRun(this::open, () -> {
            // Its key entries went with it, and the mark came down to the highest record left.
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(2);
            assertThat(number("SELECT through FROM panoptes_request_key_mark"))
                    .isEqualTo(number("SELECT MAX(rowid) FROM panoptes_records"));
        });
    }

    /**
     * Two runs' answers keyed, the later one deleted ({@code deleted} runs then); a third run's
     * answers, in a sitting never ended (on SQLite in the deleted rowids), are found, so are the
     * first's, and the deleted run's are not. Shared with {@link PostgresResultStoreTest}.
     */
    static void checkNewAnswersFoundAfterDeletingTheLastRun(Supplier<JdbcResultStore> open, Check deleted)
            throws Exception {
        try (JdbcResultStore store = open.get()) {
            List<String> first = answer(store, "aaaa", 2);
            store.endSitting("aaaa");
            List<String> gone = answer(store, "bbbb", 3);
            store.endSitting("bbbb");
            assertThat(store.deleteRun("bbbb").records()).isEqualTo(3);
            deleted.run();
            assertThat(lookUp(store, gone)).isEmpty();

            List<String> next = answer(store, "cccc", 2);
            assertFound(store, next, "cccc");
            assertFound(store, first, "aaaa");
        }
    }

    @Test
    void resettingFailedAnswersForgetsTheirKeyEntries() throws Exception {
        try (JdbcResultStore store = open()) {
            store.recordRun(new RunEntry("aaaa", "s.jsonl", List.of("m"), "exact", 1, 2, Instant.ofEpochMilli(1)));
            Job failed = job("aaaa", 0);
            store.record(failed, new JobOutcome(failed.id(), List.of(ResponseRecord.failed("v0", "m", 1L, "HTTP 500"))),
                    "w1");
            Job good = job("aaaa", 1);
            store.record(good, new JobOutcome(good.id(), List.of(new ResponseRecord("v1", "answer of aaaa"))), "w1");
            store.endSitting("aaaa");
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(2);

            assertThat(store.resetFailedAnswers("aaaa").answers()).hasSize(1);
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(1);
            assertFound(store, List.of(key("aaaa", 1)), "aaaa");
        }
    }

    @Test
    void afterAVacuumWhileClosedNewAnswersAreFound() throws Exception {
        List<String> first;
        try (JdbcResultStore store = open()) {
            first = answer(store, "aaaa", 3);
            store.endSitting("aaaa");
            answer(store, "bbbb", 3);
            store.endSitting("bbbb");
            store.deleteRun("aaaa");
        }
        execute("VACUUM");
        try (JdbcResultStore store = open()) {
            List<String> next = answer(store, "cccc", 4);
            assertFound(store, next, "cccc");
            assertThat(lookUp(store, first)).isEmpty();
        }
    }

    /**
     * What the SQLite documentation allows a VACUUM to do to a table without an INTEGER PRIMARY KEY
     * (the SQLite of this writing keeps them): renumber its rowids, in their order, here done by
     * hand while the store is closed, after a deletion left a gap below the mark and a sitting that
     * never ended left records above it. Those records are found, and so are the others.
     */
    @Test
    void afterTheRowidsWereRenumberedWhileClosedUnkeyedAnswersAreFound() throws Exception {
        List<String> a;
        List<String> c;
        List<String> d;
        try (JdbcResultStore store = open()) {
            a = answer(store, "aaaa", 3);
            store.endSitting("aaaa");
            answer(store, "bbbb", 3);
            store.endSitting("bbbb");
            c = answer(store, "cccc", 3);
            store.endSitting("cccc");
            store.deleteRun("bbbb");
            d = answer(store, "dddd", 2);
            // Never ended: dddd's records are above the mark, unkeyed.
        }
        String create;
        try (Connection conn = plain(); Statement s = conn.createStatement();
             ResultSet rs = s.executeQuery("SELECT sql FROM sqlite_master WHERE name = 'panoptes_records'")) {
            rs.next();
            create = rs.getString(1);
        }
        long before = number("SELECT MAX(rowid) FROM panoptes_records");
        execute("ALTER TABLE panoptes_records RENAME TO old_records", create,
                "INSERT INTO panoptes_records SELECT * FROM old_records ORDER BY rowid", "DROP TABLE old_records");
        assertThat(number("SELECT MAX(rowid) FROM panoptes_records")).as("renumbered").isLessThan(before);
        try (JdbcResultStore store = open()) {
            assertFound(store, d, "dddd");
            assertFound(store, a, "aaaa");
            assertFound(store, c, "cccc");
        }
    }

    @Test
    void aStaleKeyEntryNeverYieldsAnAnswer() throws Exception {
        checkAStaleKeyEntryYieldsNothing(this::execute, this::open,
                () -> assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(1));
    }

    /**
     * A record deleted behind the store's back (its key entry, on SQLite, left: {@code left} checks
     * it), its job and vignette then answering another request: the old key finds nothing, the new
     * one its answer. Shared with {@link PostgresResultStoreTest}.
     */
    static void checkAStaleKeyEntryYieldsNothing(JdbcResultStoreV4Test.Sql sql, Supplier<JdbcResultStore> open,
                                                 Check left) throws Exception {
        String stale;
        try (JdbcResultStore store = open.get()) {
            stale = answer(store, "aaaa", 1).get(0);
            store.endSitting("aaaa");
        }
        sql.execute("DELETE FROM panoptes_records");
        left.run();
        try (JdbcResultStore store = open.get()) {
            assertThat(lookUp(store, List.of(stale))).isEmpty();
            Job same = job("aaaa", 0);
            Vignette other = new Vignette("v0", "another question");
            Job changed = new Job(same.id(), new EvalSpec("s", List.of(other), ZERO), "aaaa", 0);
            store.record(changed, new JobOutcome(changed.id(), List.of(new ResponseRecord("v0", "answer of aaaa"))),
                    "w1");
            store.endSitting("aaaa");
            assertThat(lookUp(store, List.of(stale))).as("the stale entry").isEmpty();
            assertFound(store, List.of(RequestKey.of(changed, other)), "aaaa");
        }
    }

    @Test
    void aVersion6DatabaseIsUpgradedEveryAnswerKeyedAndTheIndexDropped() throws Exception {
        checkUpgradeFromVersion6(this::execute, this::open, () -> {
            assertThat(number("SELECT MAX(version) FROM panoptes_schema")).isEqualTo(7);
            assertThat(number("SELECT COUNT(*) FROM sqlite_master WHERE name = 'panoptes_records_request_key'"))
                    .isZero();
            assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).as("keyed by the upgrade").isEqualTo(5);
            assertThat(number("SELECT through FROM panoptes_request_key_mark"))
                    .isEqualTo(number("SELECT MAX(rowid) FROM panoptes_records"));
        });
        assertThat(number("SELECT COUNT(*) FROM panoptes_request_keys")).isEqualTo(5);
    }

    /**
     * A version 6 database (SQLite's: the index, none of the key tables) with answers the cache may
     * serve opens at version 7 ({@code upgraded} checks what it holds before any lookup); the
     * answers are found, and reopening upgrades nothing twice. Shared with
     * {@link PostgresResultStoreTest}.
     */
    static void checkUpgradeFromVersion6(JdbcResultStoreV4Test.Sql sql, Supplier<JdbcResultStore> open,
                                         Check upgraded) throws Exception {
        List<String> keys;
        try (JdbcResultStore store = open.get()) {
            keys = answer(store, "aaaa", 5);
            store.endSitting("aaaa");
        }
        sql.execute("DROP TABLE IF EXISTS panoptes_request_keys", "DROP TABLE IF EXISTS panoptes_request_key_mark",
                "CREATE INDEX IF NOT EXISTS panoptes_records_request_key ON panoptes_records (request_key)",
                "UPDATE panoptes_schema SET version = 6");
        try (JdbcResultStore store = open.get()) {
            upgraded.run();
            assertFound(store, keys, "aaaa");
        }
        try (JdbcResultStore store = open.get()) {
            assertThat(store.recordCount()).as("opened again: nothing upgraded twice or lost").isEqualTo(5);
            assertFound(store, keys, "aaaa");
        }
    }
}

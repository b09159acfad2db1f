package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.store.ResultStore.Answer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A SQLite store keeps SQLite's page cache and checkpoint interval while its batches are small
 * (the one-worker product run, or a moment's backlog after a stall), and switches to a 64 MiB
 * cache and a checkpoint every 16,000 WAL pages once {@link SqlitePragmas#BULK_BATCHES_IN_A_ROW}
 * batches in a row held {@link SqlitePragmas#BULK_BATCH_ANSWERS} answers or more (a fleet), on
 * that connection and on any that replaces it (docs/DESIGN.md, "What a batch costs SQLite").
 */
class SqliteBulkSettingsTest {
    /** SQLite's own defaults: a cache of 2,000 KiB, a checkpoint every 1,000 WAL pages. */
    private static final long DEFAULT_CACHE = -2_000;
    private static final long DEFAULT_AUTOCHECKPOINT = 1_000;

    @TempDir
    Path dir;

    /** Every connection the store opened, in order: the pragmas are each connection's own. */
    private final List<Connection> opened = new CopyOnWriteArrayList<>();

    private JdbcResultStore open() {
        String url = "jdbc:sqlite:" + dir.resolve("bulk.db");
        return JdbcResultStore.open(() -> {
            Connection c = DriverManager.getConnection(url);
            opened.add(c);
            return c;
        }, url, null, "test", 1_000, Clock.systemUTC());
    }

    @Test
    void batchesBelowTheThresholdKeepSqlitesDefaults() throws SQLException {
        try (JdbcResultStore store = open()) {
            for (int i = 0; i < SqlitePragmas.BULK_BATCHES_IN_A_ROW + 1; i++) {
                store.recordAll(answers("a" + i, SqlitePragmas.BULK_BATCH_ANSWERS - 1), new ArrayList<>());
            }

            Connection c = opened.get(0);
            assertThat(pragma(c, "cache_size")).isEqualTo(DEFAULT_CACHE);
            assertThat(pragma(c, "wal_autocheckpoint")).isEqualTo(DEFAULT_AUTOCHECKPOINT);
            assertThat(pragma(c, "synchronous")).as("NORMAL").isEqualTo(1L);
        }
    }

    @Test
    void largeBatchesInARowSwitchToALargeCacheAndRareCheckpoints() throws SQLException {
        try (JdbcResultStore store = open()) {
            Connection c = opened.get(0);
            largeBatches(store, "a", SqlitePragmas.BULK_BATCHES_IN_A_ROW - 1);
            assertThat(pragma(c, "cache_size")).as("one batch short").isEqualTo(DEFAULT_CACHE);

            largeBatches(store, "b", 1);
            assertThat(pragma(c, "cache_size")).isEqualTo(-65_536L);
            assertThat(pragma(c, "wal_autocheckpoint")).isEqualTo(16_000L);

            // Small batches after them do not switch back: the run has shown it is a fleet's.
            store.recordAll(answers("c", 3), new ArrayList<>());
            assertThat(pragma(c, "cache_size")).isEqualTo(-65_536L);
        }
    }

    @Test
    void aSmallBatchBetweenLargeOnesStartsTheCountAgain() throws SQLException {
        try (JdbcResultStore store = open()) {
            Connection c = opened.get(0);
            largeBatches(store, "a", SqlitePragmas.BULK_BATCHES_IN_A_ROW - 1);
            store.recordAll(answers("b", 1), new ArrayList<>());
            largeBatches(store, "c", SqlitePragmas.BULK_BATCHES_IN_A_ROW - 1);
            assertThat(pragma(c, "cache_size")).isEqualTo(DEFAULT_CACHE);
            assertThat(pragma(c, "wal_autocheckpoint")).isEqualTo(DEFAULT_AUTOCHECKPOINT);

            largeBatches(store, "d", 1);
            assertThat(pragma(c, "wal_autocheckpoint")).isEqualTo(16_000L);
        }
    }

    @Test
    void aConnectionThatReplacesOneInBulkKeepsTheSettings() throws SQLException {
        try (JdbcResultStore store = open()) {
            largeBatches(store, "a", SqlitePragmas.BULK_BATCHES_IN_A_ROW);
            opened.get(0).close();
            assertThatThrownBy(() -> store.recordAll(answers("b", 1), new ArrayList<>()))
                    .isInstanceOf(StoreException.class);

            store.recordAll(answers("b", 1), new ArrayList<>());

            assertThat(opened).hasSize(2);
            Connection fresh = opened.get(1);
            assertThat(pragma(fresh, "cache_size")).isEqualTo(-65_536L);
            assertThat(pragma(fresh, "wal_autocheckpoint")).isEqualTo(16_000L);
            assertThat(store.recordCount())
                    .isEqualTo((long) SqlitePragmas.BULK_BATCHES_IN_A_ROW * SqlitePragmas.BULK_BATCH_ANSWERS + 1);
        }
    }

    @Test
    void aNewConnectionOfASmallBatchStoreKeepsTheDefaults() throws SQLException {
        try (JdbcResultStore store = open()) {
            store.recordAll(answers("a", 10), new ArrayList<>());
            opened.get(0).close();
            assertThatThrownBy(() -> store.recordAll(answers("b", 1), new ArrayList<>()))
                    .isInstanceOf(StoreException.class);
            store.recordAll(answers("b", 1), new ArrayList<>());

            Connection fresh = opened.get(1);
            assertThat(pragma(fresh, "cache_size")).isEqualTo(DEFAULT_CACHE);
            assertThat(pragma(fresh, "wal_autocheckpoint")).isEqualTo(DEFAULT_AUTOCHECKPOINT);
        }
    }

    /** {@code count} batches of exactly {@link SqlitePragmas#BULK_BATCH_ANSWERS} answers each. */
    private static void largeBatches(JdbcResultStore store, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            store.recordAll(answers(prefix + i + "-", SqlitePragmas.BULK_BATCH_ANSWERS), new ArrayList<>());
        }
    }

    private static List<Answer> answers(String prefix, int count) {
        List<Answer> answers = new ArrayList<>(count);
        for (Job job : TestJobs.jobs(prefix, count)) {
            answers.add(new Answer(job, TestJobs.echo(job), "w1"));
        }
        return answers;
    }

    private static long pragma(Connection c, String name) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA " + name)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}

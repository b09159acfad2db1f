package dev.panoptes.control.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a SQLite store's connection is set up for a fleet's writes: a page cache that holds the key
 * index pages of the jobs in flight, and checkpoints far enough apart that each writes the hot
 * pages back once for many commits, rather than every two or three commits as SQLite's default
 * does (see {@link StoreConnection#SQLITE_WAL_AUTOCHECKPOINT_PAGES}).
 */
class StoreConnectionPragmasTest {
    /** SQLite's default page size, which the store keeps. */
    private static final int PAGE = 4096;

    @TempDir
    Path dir;

    @Test
    void theConnectionKeepsALargePageCacheAndCheckpointsRarely() throws SQLException {
        StoreConnection db = open("results.db");
        try {
            assertThat(pragma(db, "cache_size")).isEqualTo(-65_536L);
            assertThat(pragma(db, "wal_autocheckpoint")).isEqualTo(16_000L);
            assertThat(pragma(db, "synchronous")).as("NORMAL").isEqualTo(1L);
        } finally {
            db.close();
        }
    }

    @Test
    void commitsOfMoreThanSqlitesDefaultThousandPagesStayInTheWal() throws Exception {
        Path file = dir.resolve("results.db");
        StoreConnection db = open("results.db");
        try {
            // 40 commits of about 50 pages each: 2,000 pages, twice what SQLite's default lets the
            // WAL hold before a commit checkpoints it and starts it again from its beginning.
            String reason = "x".repeat(PAGE - 200);
            try (PreparedStatement insert = db.connection().prepareStatement(
                    "INSERT INTO panoptes_failures (job_id, reason, attempts, failed_at) VALUES (?, ?, 1, 0)")) {
                int n = 0;
                for (int commit = 0; commit < 40; commit++) {
                    for (int row = 0; row < 50; row++) {
                        insert.setString(1, "job-" + n++);
                        insert.setString(2, reason);
                        insert.addBatch();
                    }
                    insert.executeBatch();
                    db.connection().commit();
                }
            }
            long walPages = Files.size(Path.of(file + "-wal")) / (PAGE + 24);
            assertThat(walPages).as("pages in the WAL: no checkpoint restarted it").isGreaterThan(2_000);
        } finally {
            db.close();
        }
    }

    private StoreConnection open(String name) {
        String url = "jdbc:sqlite:" + dir.resolve(name);
        return StoreConnection.open(() -> DriverManager.getConnection(url), name, null, "check the file", 1_000);
    }

    private static long pragma(StoreConnection db, String name) throws SQLException {
        try (Statement s = db.connection().createStatement(); ResultSet rs = s.executeQuery("PRAGMA " + name)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}

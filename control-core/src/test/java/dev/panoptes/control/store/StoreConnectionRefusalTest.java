package dev.panoptes.control.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a failed write means on a SQLite file: the database refusing the data (a job's own failure,
 * never retried) or a store fault that retrying may mend (the run holds its answers and tries again).
 * sqlite-jdbc reports its refusals without a SQLSTATE, as SQLite's result code, often an extended
 * one (SQLITE_CONSTRAINT_UNIQUE is 2067: 19 in its low byte).
 */
class StoreConnectionRefusalTest {
    @TempDir
    Path dir;

    @Test
    void sqliteRefusalsAreTheDataAndEverythingElseMayBeRetried() {
        String url = "jdbc:sqlite:" + dir.resolve("results.db");
        StoreConnection db = StoreConnection.open(() -> DriverManager.getConnection(url), "results.db", null,
                "check the file", 1_000);
        try {
            assertThat(db.refusesTheData(new SQLException("string or blob too big", null, 18))).as("TOOBIG").isTrue();
            assertThat(db.refusesTheData(new SQLException("constraint failed", null, 19))).as("CONSTRAINT").isTrue();
            assertThat(db.refusesTheData(new SQLException("UNIQUE constraint failed", null, 2067)))
                    .as("CONSTRAINT_UNIQUE, an extended code").isTrue();
            assertThat(db.refusesTheData(new SQLException("datatype mismatch", null, 20))).as("MISMATCH").isTrue();

            assertThat(db.refusesTheData(new SQLException("database is locked", null, 5))).as("BUSY").isFalse();
            assertThat(db.refusesTheData(new SQLException("disk I/O error", null, 10))).as("IOERR").isFalse();
            assertThat(db.refusesTheData(new SQLException("database or disk is full", null, 13))).as("FULL").isFalse();
            assertThat(db.refusesTheData(new SQLTransientConnectionException("gone", "08006")))
                    .as("a lost connection").isFalse();
            assertThat(db.refusesTheData(new IllegalStateException("a driver's bug"))).as("not a SQLException").isFalse();
            assertThat(db.refusesTheData(new SQLDataException("value too long", "22001"))).as("SQLSTATE 22").isTrue();
            assertThat(db.refusesTheData(new SQLException("unique violation", "23505"))).as("SQLSTATE 23").isTrue();
        } finally {
            db.close();
        }
    }
}

package dev.panoptes.control.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/** {@link JdbcResultStore#deleteRun} on SQLite ({@link RunDeletionContract}; PostgreSQL in {@link PostgresRunDeletionTest}). */
class JdbcResultStoreDeleteRunTest {
    @TempDir
    Path dir;

    private JdbcResultStore open() {
        return JdbcResultStore.openSqlite(dir.resolve("runs.db"));
    }

    @Test
    void deletingARunRemovesEverythingOfItAndNothingOfAnotherAndIsIdempotent() {
        RunDeletionContract.checkDeleteRemovesTheRunAndNothingOfAnother(this::open);
    }

    @Test
    void aDeletedRunIsStoredAfreshWhenItRunsAgain() {
        RunDeletionContract.checkADeletedRunCanBeStoredAgain(this::open);
    }
}

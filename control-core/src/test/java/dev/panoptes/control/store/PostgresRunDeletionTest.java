package dev.panoptes.control.store;

import org.junit.jupiter.api.Test;

/** {@link JdbcResultStore#deleteRun} on a real PostgreSQL server ({@link TestPostgres}, {@link RunDeletionContract}). */
class PostgresRunDeletionTest {
    private final TestPostgres.Database db = TestPostgres.freshDatabase();

    @Test
    void deletingARunRemovesEverythingOfItAndNothingOfAnotherAndIsIdempotent() {
        RunDeletionContract.checkDeleteRemovesTheRunAndNothingOfAnother(db::open);
    }

    @Test
    void aDeletedRunIsStoredAfreshWhenItRunsAgain() {
        RunDeletionContract.checkADeletedRunCanBeStoredAgain(db::open);
    }
}

package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The SQLite settings of a store's connection: those every connection gets when it is opened,
 * and those it switches to once batches show that answers come faster than commits
 * ({@link #bulk}). Not for PostgreSQL, whose server keeps its own settings.
 *
 * <p>Called only by {@link StoreConnection}, on the thread that holds the store's lock.
 */
final class SqlitePragmas {
    /**
     * Answers in one committed batch from which the connection takes the {@link #bulk} settings.
     * The scheduler's store thread takes up to 512 writes at a time (256 at job size 8, its cap of
     * 2,048 records), and only a queue that stays deep fills a batch that far: the one-worker
     * product run commits five to ten answers at a time, a fleet of 64,000 jobs in flight 512.
     */
    static final int BULK_BATCH_ANSWERS = 256;
    /**
     * Batches of {@link #BULK_BATCH_ANSWERS} answers or more, one after another, that switch the
     * connection to {@link #bulk}. Not the first such batch alone: a store thread held up for a
     * moment (a checkpoint's fsync, a pause of the JVM) takes what queued meanwhile in one or two
     * large batches even in a one-worker run, whose batches are then small again; a fleet's queue
     * stays deep, and its batches full, for the whole run.
     */
    static final int BULK_BATCHES_IN_A_ROW = 8;
    /**
     * The page cache in bulk, in SQLite's units: negative, so KiB (64 MiB; SQLite's default is 2
     * MiB). A fleet answers out of job order, so each batch's inserts land on leaf pages scattered
     * over the key indexes of the records and scores of every job in flight (64,000 jobs: some
     * 1,300 pages, twice what 2 MiB holds); a page that left the cache is read back from the WAL
     * or the file on its next insert. Not from the start: the cache is only a bound, and it grows
     * by one allocation per page as the database does, which cost the one-worker product run,
     * whose inserts hit the same few rightmost pages and gain nothing from it, some 5 us per
     * answer on the store thread (the C library growing its heap and the kernel faulting each new
     * page in: docs/DESIGN.md, "What a batch costs SQLite").
     */
    static final int BULK_CACHE_SIZE = -64 * 1024;
    /**
     * WAL frames (pages) after which a commit checkpoints in bulk, against SQLite's default of
     * 1,000. A checkpoint copies each page in the WAL back into the database file and syncs both;
     * a fleet's batch of 512 answers scattered over the key indexes writes some 500 pages, so at
     * 1,000 the store checkpointed every two commits, writing the same hot index pages back each
     * time. At 16,000 (a WAL of up to 64 MiB) a checkpoint comes some thirty commits apart and
     * writes each hot page once for all of them. The price: an operating-system crash (not a
     * killed coordinator) may lose the commits since the last checkpoint, up to this many pages'
     * worth, whose jobs a resume sends again (see {@link JdbcResultStore}, durability).
     */
    static final int BULK_WAL_AUTOCHECKPOINT = 16_000;

    private SqlitePragmas() {
    }

    /**
     * Every connection's settings: a busy timeout, the WAL journal and {@code synchronous = NORMAL}.
     *
     * @throws SQLException when the database refuses one
     */
    static void prepare(Connection connection, int busyTimeoutMs) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA busy_timeout = " + busyTimeoutMs);
            s.execute("PRAGMA journal_mode = WAL");
            // A commit survives a killed process without an fsync; not an OS crash (see JdbcResultStore).
            s.execute("PRAGMA synchronous = NORMAL");
        }
    }

    /**
     * The settings for batches of {@link #BULK_BATCH_ANSWERS} answers or more: a larger page
     * cache and checkpoints further apart. Neither is transactional, so they may be set inside
     * the connection's open transaction.
     *
     * @throws SQLException when the database refuses one
     */
    static void bulk(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA cache_size = " + BULK_CACHE_SIZE);
            s.execute("PRAGMA wal_autocheckpoint = " + BULK_WAL_AUTOCHECKPOINT);
        }
    }
}

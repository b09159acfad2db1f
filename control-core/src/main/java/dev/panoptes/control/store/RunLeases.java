package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;

/**
 * The takeover epochs of runs on a PostgreSQL store ({@code panoptes_run_leases}: one row per run,
 * its epoch, who took it and when). A coordinator that takes a run's lock takes its lease
 * ({@link #take}), which adds one to the epoch; its store then checks, in each write transaction,
 * that the epoch is still its own ({@link JdbcResultStore#fencedBy}). A coordinator that lost its
 * lock but lives on (a network partition, a frozen process) so stores nothing once another took
 * the run over: the taker's increment waits for the row lock each write transaction holds on the
 * lease ({@code FOR SHARE}), and every write transaction after it finds the new epoch.
 *
 * <p>PostgreSQL only. Stateless; any thread, with a connection of its own.
 */
public final class RunLeases {
    static final String CREATE = "CREATE TABLE IF NOT EXISTS panoptes_run_leases (run_id VARCHAR(64) NOT NULL"
            + " PRIMARY KEY, epoch BIGINT NOT NULL, holder TEXT, taken_at BIGINT NOT NULL)";
    /**
     * The lease's row, locked against a takeover until the transaction ends; the same statement
     * bounds how long this transaction may idle (so that a writer frozen inside it cannot hold up a
     * takeover for longer than that).
     */
    static final String CHECK = "SELECT epoch, holder, taken_at, set_config('idle_in_transaction_session_timeout', ?,"
            + " true) FROM panoptes_run_leases WHERE run_id = ? FOR SHARE";

    private RunLeases() {
    }

    /** Who holds a run's lease, as its row says. */
    public record Lease(long epoch, String holder, Instant takenAt) {
    }

    /**
     * Takes the lease of {@code runId}: its epoch plus one (1 for a run never leased), in a
     * transaction of its own; creates the table when missing. Waits for the write transactions of
     * the holder before (they lock the row), so that none of them commits after this returns.
     * Call only while holding the run's lock, so that two takers never race.
     *
     * @param connection a PostgreSQL connection in auto-commit mode, left so
     * @param holder     who takes it, for messages (pid, host, address)
     * @return the new epoch
     * @throws SQLException when the database fails
     */
    public static long take(Connection connection, String runId, String holder, Instant now) throws SQLException {
        connection.setAutoCommit(false);
        try {
            try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(?)");
                 Statement s = connection.createStatement()) {
                // Under the schema's lock: CREATE TABLE IF NOT EXISTS is not safe against a concurrent creator.
                lock.setLong(1, JdbcResultStore.SCHEMA_LOCK_KEY);
                lock.execute();
                s.execute(CREATE);
            }
            connection.commit();
            long epoch;
            try (PreparedStatement up = connection.prepareStatement("INSERT INTO panoptes_run_leases"
                    + " (run_id, epoch, holder, taken_at) VALUES (?, 1, ?, ?) ON CONFLICT (run_id) DO UPDATE SET"
                    + " epoch = panoptes_run_leases.epoch + 1, holder = EXCLUDED.holder, taken_at = EXCLUDED.taken_at"
                    + " RETURNING epoch")) {
                up.setString(1, runId);
                up.setString(2, holder);
                up.setLong(3, now.toEpochMilli());
                try (ResultSet rs = up.executeQuery()) {
                    rs.next();
                    epoch = rs.getLong(1);
                }
            }
            connection.commit();
            return epoch;
        } catch (SQLException | RuntimeException e) {
            try {
                connection.rollback();
            } catch (SQLException r) {
                e.addSuppressed(r);
            }
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    /**
     * The lease of {@code runId} as it stands, or null when the run was never leased (or the table
     * does not exist). Read in the connection's current transaction, or auto-committed.
     *
     * @throws SQLException when the database fails
     */
    public static Lease current(Connection connection, String runId) throws SQLException {
        try (PreparedStatement q = connection.prepareStatement("SELECT to_regclass('panoptes_run_leases') IS NOT NULL");
             ResultSet rs = q.executeQuery()) {
            if (!rs.next() || !rs.getBoolean(1)) {
                return null;
            }
        }
        try (PreparedStatement q = connection.prepareStatement(
                "SELECT epoch, holder, taken_at FROM panoptes_run_leases WHERE run_id = ?")) {
            q.setString(1, runId);
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? new Lease(rs.getLong(1), rs.getString(2), Instant.ofEpochMilli(rs.getLong(3))) : null;
            }
        }
    }
}

package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The check a fenced store makes first in each write transaction ({@link JdbcResultStore#fencedBy}):
 * the run's lease, read {@code FOR SHARE} so that no takeover commits before this transaction
 * ends, must still be at this store's epoch (see {@link RunLeases}). The same statement bounds how
 * long the transaction may idle, so that a writer frozen inside it holds up a takeover no longer.
 *
 * <p>Immutable; used by its store's connection, under the store's lock.
 */
final class RunFence {
    private final String runId;
    private final long epoch;
    private final String idleMs;

    RunFence(String runId, long epoch, long idleMs) {
        this.runId = runId;
        this.epoch = epoch;
        this.idleMs = Long.toString(idleMs);
    }

    /**
     * Checks the lease in the connection's current transaction, which then holds its row.
     *
     * @throws StoreFencedException when another coordinator took the run over (the caller rolls back)
     * @throws SQLException when the database fails
     */
    void check(Connection connection) throws SQLException {
        RunLeases.Lease lease;
        try (PreparedStatement check = connection.prepareStatement(RunLeases.CHECK)) {
            check.setString(1, idleMs);
            check.setString(2, runId);
            try (ResultSet rs = check.executeQuery()) {
                lease = rs.next() ? new RunLeases.Lease(rs.getLong(1), rs.getString(2),
                        Instant.ofEpochMilli(rs.getLong(3))) : null;
            }
        }
        if (lease == null || lease.epoch() != epoch) {
            throw new StoreFencedException(runId, epoch, lease);
        }
    }
}

package dev.panoptes.coordinator;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunLeases;
import dev.panoptes.control.store.StoreFencedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a coordinator finds that another one (a standby) took its run over: a write refused by the
 * store's fence ({@link StoreFencedException}, possibly as the cause of the run's stop), or a lost
 * lock whose lease has moved on; and the one line it prints then. Stateless; any thread.
 */
final class Takeover {
    private static final Logger log = LoggerFactory.getLogger(Takeover.class);

    private Takeover() {
    }

    /** The fenced write in {@code e}'s causes, or null when there is none. */
    static StoreFencedException in(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof StoreFencedException f) {
                return f;
            }
        }
        return null;
    }

    /**
     * After the run's lock was lost: whether another coordinator took the run over, as the lease
     * says (its epoch is no longer {@code epoch}); null when not, or when it cannot be read.
     */
    static StoreFencedException afterLockLost(JdbcResultStore store, String runId, long epoch) {
        if (epoch < 1) {
            return null;
        }
        try {
            RunLeases.Lease now = store.lease(runId);
            return now != null && now.epoch() != epoch ? new StoreFencedException(runId, epoch, now) : null;
        } catch (RuntimeException e) {
            log.debug("cannot read the lease of run {} after losing its lock", runId, e);
            return null;
        }
    }

    /** The console line of a fenced coordinator that exits with {@code exitCode}. */
    static String line(StoreFencedException e, int exitCode) {
        return "fenced: " + e.getMessage() + "; this coordinator stops (exit " + exitCode
                + "), the run goes on under the one that took it over";
    }
}

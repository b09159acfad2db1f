package dev.panoptes.control.store;

/**
 * A write was refused because another coordinator took the run over: the run's takeover epoch
 * ({@link RunLeases}) is no longer the one this store was fenced by ({@link JdbcResultStore#fencedBy}).
 * Nothing of the write was stored, and nothing this store writes will be: retrying cannot help,
 * which is why this is not a {@link StoreException} (a writer retries those). The message is one
 * line naming the run, both epochs and the new holder.
 */
public final class StoreFencedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String runId;
    private final long epoch;
    private final long currentEpoch;

    /**
     * @param runId   the run taken over
     * @param epoch   the epoch the refused writer held
     * @param current the lease as it stands, or null when its row is gone
     */
    public StoreFencedException(String runId, long epoch, RunLeases.Lease current) {
        super("run " + runId + " was taken over by another coordinator"
                + (current == null ? " (its lease is gone: the run was deleted)"
                : " (" + (current.holder() == null ? "unnamed" : current.holder()) + ", takeover epoch "
                + current.epoch() + " since " + current.takenAt() + ")")
                + "; this coordinator held epoch " + epoch + " and stores nothing more");
        this.runId = runId;
        this.epoch = epoch;
        this.currentEpoch = current == null ? -1 : current.epoch();
    }

    /** The run that was taken over. */
    public String runId() {
        return runId;
    }

    /** The epoch this store wrote under. */
    public long epoch() {
        return epoch;
    }

    /** The run's epoch now; -1 when its lease row is gone. */
    public long currentEpoch() {
        return currentEpoch;
    }
}

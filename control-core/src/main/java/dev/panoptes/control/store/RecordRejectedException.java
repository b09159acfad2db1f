package dev.panoptes.control.store;

/**
 * The store refused a record (or a failure) for what it holds, not because it is unreachable,
 * busy or full: a value the database cannot keep (PostgreSQL refuses a NUL character in text),
 * a constraint it breaks, or a record that cannot be prepared for storing (scored, say). Writing
 * the same thing again cannot succeed, so a scheduler counts it as the job's own failure rather
 * than waiting for the store. The message names the store, the job and the reason.
 */
public class RecordRejectedException extends StoreException {
    private static final long serialVersionUID = 1L;

    public RecordRejectedException(String message, Throwable cause) {
        super(message, cause);
    }
}

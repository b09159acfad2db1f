package dev.panoptes.control.schedule;

import dev.panoptes.control.store.StoreException;

/**
 * A scheduler's run stopped because its result store took no write for
 * {@link SchedulerOptions.StoreRetry#maxOutage()}, or failed in a way that retrying cannot mend.
 * What was stored stays stored; the answers still waiting for the store are not, and running the
 * same jobs again against the store resumes (they are sent again). The message says how long the
 * store failed, its last error and what was kept; the store's last exception is the cause.
 */
public class StoreUnavailableException extends StoreException {
    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}

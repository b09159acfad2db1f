package dev.panoptes.worker;

import dev.panoptes.control.ControlException;

/**
 * The coordinator answered {@code register} with {@code rejected}. The frame says whether
 * registering again may help: not for a wrong token, an unsupported protocol or an invalid worker
 * id, which only the operator can fix, so {@link WorkerLoop#runForever()} stops and the worker
 * exits; yes for a refusal of the moment, which the loop retries with backoff.
 */
public final class RegistrationRejectedException extends ControlException {
    private static final long serialVersionUID = 1L;

    private final String reason;
    private final boolean retryable;

    /**
     * A rejection that only the operator can fix (not retryable).
     *
     * @param coordinator the coordinator's address, for the message
     * @param workerId    the id that was refused
     * @param reason      the coordinator's reason, verbatim
     */
    public RegistrationRejectedException(String coordinator, String workerId, String reason) {
        this(coordinator, workerId, reason, false);
    }

    /**
     * @param coordinator the coordinator's address, for the message
     * @param workerId    the id that was refused
     * @param reason      the coordinator's reason, verbatim
     * @param retryable   the {@code rejected} frame's {@code retryable} flag: whether registering
     *                    again later may succeed
     */
    public RegistrationRejectedException(String coordinator, String workerId, String reason, boolean retryable) {
        super("coordinator " + coordinator + " rejected the registration of worker " + workerId + ": " + reason);
        this.reason = reason;
        this.retryable = retryable;
    }

    /** The coordinator's reason, verbatim. */
    public String reason() {
        return reason;
    }

    /** The frame's {@code retryable} flag: true when registering again later may succeed. */
    public boolean retryable() {
        return retryable;
    }

    /** The same as {@link #retryable()}: whether the same registration may succeed later. */
    @Override
    public boolean isRetryable() {
        return retryable;
    }
}

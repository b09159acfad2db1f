package dev.panoptes.worker;

import dev.panoptes.control.ControlException;

/**
 * The coordinator answered {@code register} with {@code rejected} (bad token, unsupported
 * protocol, invalid worker id). Not retryable in the sense of {@link ControlException}: the same
 * registration will be refused again until the operator fixes the worker's configuration, so the
 * reconnect loop logs it loudly on every attempt.
 */
public final class RegistrationRejectedException extends ControlException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    /**
     * @param coordinator the coordinator's address, for the message
     * @param workerId    the id that was refused
     * @param reason      the coordinator's reason, verbatim
     */
    public RegistrationRejectedException(String coordinator, String workerId, String reason) {
        super("coordinator " + coordinator + " rejected the registration of worker " + workerId + ": " + reason);
        this.reason = reason;
    }

    /** The coordinator's reason, verbatim. */
    public String reason() {
        return reason;
    }

    /** False: the same registration would be refused again. */
    @Override
    public boolean isRetryable() {
        return false;
    }
}

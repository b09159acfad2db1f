package dev.panoptes.worker;

import dev.panoptes.control.ControlException;

/**
 * A plaintext worker met a coordinator that speaks TLS: the first bytes it sent back are a TLS
 * record where a frame's length should be. Only the worker's operator can fix it (start the
 * worker with {@code --tls}), so {@link WorkerLoop#runForever()} stops and the worker exits with
 * {@value WorkerMain#EXIT_REJECTED}, saying so once, instead of reconnecting forever.
 */
public final class CoordinatorSpeaksTlsException extends ControlException {
    private static final long serialVersionUID = 1L;

    /** @param coordinator the coordinator's {@code host:port} */
    public CoordinatorSpeaksTlsException(String coordinator, Throwable cause) {
        super("the coordinator at " + coordinator + " speaks TLS: start the worker with --tls (and --tls-ca FILE"
                + " when the coordinator's CA is not in this JVM's trust store)", cause);
    }

    /** Never: the same worker would meet the same coordinator the same way. */
    @Override
    public boolean isRetryable() {
        return false;
    }
}

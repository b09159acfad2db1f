package dev.panoptes.eval.sandbox;

import dev.panoptes.control.WorkerFaultException;

/**
 * This worker cannot build a sandbox: bubblewrap is missing, user namespaces are disabled, or a
 * sandbox did not start. The worker's fault ({@link dev.panoptes.control.FailureScope#WORKER}):
 * another worker may well build one, and a worker that keeps failing so is quarantined. Never a
 * reason to run a command without a sandbox.
 */
public class SandboxUnavailableException extends WorkerFaultException {
    private static final long serialVersionUID = 1L;

    /** @param message what is missing and what to do about it */
    public SandboxUnavailableException(String message) {
        super(message);
    }

    /** @param message what is missing and what to do about it */
    public SandboxUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}

package dev.panoptes.eval.agent;

import dev.panoptes.control.JobFailedException;

/**
 * A sandboxed vignette's own set-up failed: one of its {@code files} could not be written, or one
 * of its {@code setup} commands exited non-zero, in a fresh sandbox. The same files and commands
 * fail the same way on any worker, so it is the vignette's failure
 * ({@link dev.panoptes.control.FailureScope#JOB}: stored as its failed answer, the job goes on),
 * never the model API's nor the worker's. The message names the vignette, the command, its exit
 * status and the head of what it printed.
 */
public class SandboxSetupException extends JobFailedException {
    private static final long serialVersionUID = 1L;

    /** @param message the vignette, the command, its exit status and output, and what to fix */
    public SandboxSetupException(String message) {
        super(message);
    }
}

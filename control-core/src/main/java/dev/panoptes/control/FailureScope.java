package dev.panoptes.control;

import java.util.Locale;
import java.util.Optional;

/**
 * Who a failure belongs to, which decides what the scheduler does about it (docs/PROTOCOL.md,
 * "Failure scopes").
 *
 * <ul>
 *   <li>{@link #JOB}: the same bytes would fail anywhere (the model API rejected the request as
 *       invalid, the prompt exceeds the context length, a content filter). Final at once.</li>
 *   <li>{@link #WORKER}: the worker is at fault, not the job (its model API is unreachable or
 *       answers 401, 403 or 404, its DNS or TLS fails, it names a model its API does not
 *       serve). The job goes to another worker without spending one of its attempts; the worker
 *       is quarantined after repeated ones.</li>
 *   <li>{@link #TRANSIENT}: the moment is at fault (429, 5xx, timeouts, a lost connection). The
 *       job is sent again, spending an attempt, after a backoff.</li>
 * </ul>
 */
public enum FailureScope {
    JOB,
    WORKER,
    TRANSIENT;

    /** The name on the wire: {@code job}, {@code worker} or {@code transient}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The scope of a wire name, or empty for a name this version does not know (a newer peer's):
     * the receiver then falls back on the frame's {@code retryable} flag.
     */
    public static Optional<FailureScope> fromWire(String name) {
        if (name == null) {
            return Optional.empty();
        }
        switch (name) {
            case "job":
                return Optional.of(JOB);
            case "worker":
                return Optional.of(WORKER);
            case "transient":
                return Optional.of(TRANSIENT);
            default:
                return Optional.empty();
        }
    }

    /** The scope an older peer meant when it sent only {@code retryable}. */
    public static FailureScope fromRetryable(boolean retryable) {
        return retryable ? TRANSIENT : JOB;
    }
}

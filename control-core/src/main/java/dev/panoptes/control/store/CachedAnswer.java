package dev.panoptes.control.store;

import dev.panoptes.control.ResponseRecord;

import java.time.Instant;
import java.util.Objects;

/**
 * An answer the store holds for a request key, found by {@link AnswerCache#lookUp}: what the
 * response cache serves instead of calling the model.
 *
 * @param requestKey the request's key ({@link dev.panoptes.control.RequestKey})
 * @param answer     the stored answer (its vignette id is the one it was stored under); a
 *                   successful answer, never a failed one
 * @param runId      the run that stored it, as the model gave it (never itself a cached copy)
 * @param storedAt   when it was stored: its age decides whether it has expired
 */
public record CachedAnswer(String requestKey, ResponseRecord answer, String runId, Instant storedAt) {
    /** @throws NullPointerException when a part is missing */
    public CachedAnswer {
        Objects.requireNonNull(requestKey, "requestKey");
        Objects.requireNonNull(answer, "answer");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(storedAt, "storedAt");
    }

    /**
     * This answer as the record of {@code vignetteId}: its text, the model the API reported, why
     * it stopped and its usage; no latency, since no model was called for it.
     */
    public ResponseRecord asAnswerTo(String vignetteId) {
        return new ResponseRecord(vignetteId, answer.response(), answer.model(), answer.finishReason(), null,
                answer.usage());
    }
}

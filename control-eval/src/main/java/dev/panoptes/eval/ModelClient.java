package dev.panoptes.eval;

/**
 * One call to a chat model per prompt. Implementations are thread-safe: a worker shares one
 * client among all the jobs it runs at once. {@link HttpModelClient} is the implementation for
 * OpenAI-compatible HTTP APIs; {@link EvalJobRunner} runs a job's vignettes through one.
 *
 * <p>Implementations retry transient failures themselves, so a failure that reaches the caller
 * is final for this call, and its type says whether the job may still succeed later.
 */
public interface ModelClient {
    /**
     * Sends one prompt and waits for the model's answer.
     *
     * @return the answer, with the model's own name, finish reason, usage and the call's latency
     * @throws dev.panoptes.control.JobFailedException when the request can never succeed (400,
     *                                                 401, 403, 404, 422, quota exhausted, an
     *                                                 answer that is not a chat completion);
     *                                                 the message carries the server's own error
     * @throws dev.panoptes.control.WorkerException    when it failed for a reason that may pass
     *                                                 (connection failures, timeouts, 408, 409,
     *                                                 rate-limit 429, 5xx, a truncated body)
     *                                                 after the client's own retries ran out
     * @throws InterruptedException                    when the calling thread is interrupted
     */
    ModelResponse complete(ModelRequest request) throws InterruptedException;
}

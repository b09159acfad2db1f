package dev.panoptes.eval;

import java.util.concurrent.CompletableFuture;

/**
 * One call to a chat model per prompt. Implementations are thread-safe: a worker shares one
 * client among all the jobs it runs at once. {@link dev.panoptes.eval.http.HttpModelClient} is the
 * implementation for OpenAI-compatible HTTP APIs; {@link EvalJobRunner} runs a job's vignettes through one.
 *
 * <p>Implementations retry transient failures themselves, so a failure that reaches the caller
 * is final for this call, and its {@link dev.panoptes.control.ControlException#scope() scope}
 * says whose fault it is: the job's, this worker's, or the moment's.
 *
 * <p>Two ways to call: {@link #complete} blocks the calling thread until the answer;
 * {@link #completeAsync} returns at once, for callers that may not block (an
 * {@link dev.panoptes.control.AsyncJobRunner}). Only the second is worth having for
 * implementations that can call without a thread per call, as
 * {@link dev.panoptes.eval.http.HttpModelClient} does; the default {@link #completeAsync} runs {@link #complete} on the calling thread.
 */
public interface ModelClient {
    /**
     * Sends one prompt and waits for the model's answer. Any thread, which it blocks; not a
     * thread the client completes its calls on.
     *
     * @return the answer, with the model's own name, finish reason, usage and the call's latency
     * @throws dev.panoptes.control.JobFailedException   when the request can never succeed,
     *                                                   wherever it is sent (400, 413, 422 and
     *                                                   other 4xx: an invalid request, a prompt
     *                                                   past the context length, a content
     *                                                   filter); the message carries the
     *                                                   server's own error
     * @throws dev.panoptes.control.WorkerFaultException when this worker is at fault and another
     *                                                   may succeed (401, 403, 404, 405,
     *                                                   redirects, an exhausted quota, an answer
     *                                                   that is not a chat completion, a refused
     *                                                   connection, DNS or TLS failures); the
     *                                                   message says what to check
     * @throws dev.panoptes.control.WorkerException      when it failed for a reason that may pass
     *                                                   (timeouts, resets, 408, 409, rate-limit
     *                                                   429, 5xx, a truncated body) after the
     *                                                   client's own retries ran out
     * @throws InterruptedException                    when the calling thread is interrupted
     */
    ModelResponse complete(ModelRequest request) throws InterruptedException;

    /**
     * Sends one prompt; the answer comes later. Returns at once, completes the future on threads
     * of the client's own (never on {@link java.util.concurrent.ForkJoinPool#commonPool()}), and
     * aborts the call, with any retries it would make, when the future is cancelled. A worker's
     * session calls it from its one I/O thread, so it must never block. Any thread.
     *
     * @return completes with the answer, or exceptionally with the exceptions {@link #complete}
     *         documents
     */
    CompletableFuture<ModelResponse> completeAsync(ModelRequest request);

    /**
     * Asks for the log-likelihood of each choice of a multiple-choice vignette; the answer's text
     * is {@link dev.panoptes.control.score.ChoiceLoglikelihoods}' JSON. Returns at once, as
     * {@link #completeAsync} does, and fails as it does; a client whose model API cannot give
     * prompt log-probabilities fails with a {@link dev.panoptes.control.WorkerFaultException}
     * saying so, since another worker's API may. This default is such a client. Any thread.
     */
    default CompletableFuture<ModelResponse> loglikelihoodAsync(LoglikelihoodRequest request) {
        return CompletableFuture.failedFuture(new dev.panoptes.control.WorkerFaultException("this worker's model"
                + " client (" + getClass().getSimpleName() + ") cannot ask for log-likelihoods, which multiple-choice"
                + " vignettes need"));
    }

    /**
     * How many answers of the model API were HTTP 429 (too many requests) since this client was
     * made, retried ones included; 0 when the client does not count them. Any thread.
     */
    default long throttledCount() {
        return 0;
    }
}

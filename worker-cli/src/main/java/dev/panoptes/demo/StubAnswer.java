package dev.panoptes.demo;

/**
 * One answer of {@link StubModelServer}, decided and written (by the handler thread that read its
 * request) when its request arrives, and sent when its latency is over: a chat completion ({@link Completion}) or a text completion
 * ({@link TextCompletion}).
 */
interface StubAnswer {
    /**
     * The answer's JSON.
     *
     * @param id      the number in its id
     * @param created when it was made, in seconds since the epoch
     */
    String json(long id, long created);

    /** The tokens of the prompt (words, for a chat): more than the stub's context is refused. */
    int promptTokens();
}

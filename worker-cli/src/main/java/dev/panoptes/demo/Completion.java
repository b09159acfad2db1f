package dev.panoptes.demo;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/**
 * One answer of {@link StubModelServer}, decided when its request arrives and written as a chat
 * completion when its latency is over.
 *
 * <p>{@link #json} writes the JSON that an {@code ObjectNode} holding these fields wrote before
 * (same fields, same order, strings escaped by Jackson's own encoder), without building the node.
 *
 * @param model            the model the request named, which the answer names
 * @param text             the answer
 * @param promptTokens     the words in the prompt
 * @param completionTokens the words in the answer
 */
record Completion(String model, String text, int promptTokens, int completionTokens) implements StubAnswer {
    /**
     * The answer to {@code request}: {@link StubModelServer#answer(String, String, Long)}, cut
     * before the first of the request's stop sequences it holds, with its word counts.
     */
    static Completion answering(ChatRequest request) {
        String text = StubModelServer.answer(request.prompt(), request.model(), request.seed());
        // As a model does with stop sequences: the answer ends before the first one it holds.
        int end = text.length();
        for (String stop : request.stop()) {
            int at = text.indexOf(stop);
            if (at >= 0 && at < end) {
                end = at;
            }
        }
        text = text.substring(0, end);
        return new Completion(request.model(), text, WordCount.of(request.prompt()), WordCount.of(text));
    }

    /**
     * The chat completion, OpenAI's shape.
     *
     * @param id      the number in its id, {@code chatcmpl-<id>}
     * @param created when it was made, in seconds since the epoch
     */
    @Override
    public String json(long id, long created) {
        StringBuilder json = new StringBuilder(256 + model.length() + text.length());
        json.append("{\"id\":\"chatcmpl-").append(id)
                .append("\",\"object\":\"chat.completion\",\"created\":").append(created)
                .append(",\"model\":\"");
        JsonStringEncoder.getInstance().quoteAsString(model, json);
        json.append("\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
        JsonStringEncoder.getInstance().quoteAsString(text, json);
        return json.append("\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":").append(promptTokens)
                .append(",\"completion_tokens\":").append(completionTokens)
                .append(",\"total_tokens\":").append(promptTokens + completionTokens)
                .append("}}").toString();
    }
}

package dev.panoptes.control;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One prompt of an eval suite: either a single user message ({@code prompt}) or a chat
 * ({@code messages}, the format of OpenAI evals' JSONL and of chat datasets).
 *
 * @param id       unique within its spec; results are keyed by it
 * @param prompt   the user message sent to the model; null exactly when {@code messages} is given,
 *                 otherwise not empty
 * @param expected the reference answer, or null when the suite has none
 * @param metadata free-form JSON values (strings, numbers, booleans, lists, maps, nulls);
 *                 never null, empty when absent; unmodifiable
 * @param messages the chat to send instead of {@code prompt}; empty (never null) for a prompt
 *                 vignette, else at least one message, the last of them from the user
 * @param scorer   how to score this vignette's answer, overriding the run's scorer (for example
 *                 {@code "numeric:0.01"}); null for the run's
 * @param choices  for a multiple-choice vignette scored by log-likelihood, its choices, each a
 *                 continuation of {@code prompt} (which it then needs: a chat has no prompt
 *                 log-probabilities), and {@code expected} is the right choice's index from 0;
 *                 null for a vignette whose answer the model generates
 * @param sandbox  what this vignette runs in a sandbox on the worker (tools in a multi-turn loop,
 *                 a check of its answer), or null for a vignette that runs nothing
 */
public record Vignette(String id, String prompt, String expected, Map<String, Object> metadata,
                       List<ChatMessage> messages, String scorer, Choices choices, SandboxTask sandbox) {
    /**
     * @throws IllegalArgumentException when the id is missing or empty, when both or neither of
     *                                  prompt and messages are given, when the prompt is empty,
     *                                  when the messages do not end with a user message, or when
     *                                  choices come with a chat, or with an expected answer that
     *                                  is not the index of one of them
     */
    public Vignette {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("vignette id must not be empty");
        }
        messages = messages == null ? List.of() : List.copyOf(messages);
        if (messages.isEmpty()) {
            if (prompt == null || prompt.isEmpty()) {
                throw new IllegalArgumentException("prompt of vignette '" + id + "' must not be empty");
            }
        } else {
            if (prompt != null) {
                throw new IllegalArgumentException("vignette '" + id + "' gives both prompt and messages; give one");
            }
            if (!"user".equals(messages.get(messages.size() - 1).role())) {
                throw new IllegalArgumentException("the messages of vignette '" + id
                        + "' must end with a user message, for the model to answer");
            }
        }
        metadata = metadata == null || metadata.isEmpty()
                ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
        if (scorer != null && scorer.isBlank()) {
            scorer = null;
        }
        if (choices != null) {
            if (!messages.isEmpty()) {
                throw new IllegalArgumentException("vignette '" + id + "' has choices and a chat; a multiple-choice"
                        + " vignette is scored by the log-probability of each choice after a plain-text prompt,"
                        + " which chat APIs do not give: give it a prompt instead of messages");
            }
            if (expected != null && !expected.isEmpty() && choiceIndex(expected, choices.size()) < 0) {
                throw new IllegalArgumentException("vignette '" + id + "' expects '" + expected + "', which is not"
                        + " the index of one of its " + choices.size() + " choices (0 to " + (choices.size() - 1) + ")");
            }
            if (sandbox != null) {
                throw new IllegalArgumentException("vignette '" + id + "' has choices and a sandbox; a multiple-choice"
                        + " vignette is scored by log-likelihood and runs nothing: give it one of them");
            }
        }
    }

    /** A vignette that runs nothing in a sandbox. */
    public Vignette(String id, String prompt, String expected, Map<String, Object> metadata,
                    List<ChatMessage> messages, String scorer, Choices choices) {
        this(id, prompt, expected, metadata, messages, scorer, choices, null);
    }

    /** A vignette that is not multiple choice. */
    public Vignette(String id, String prompt, String expected, Map<String, Object> metadata,
                    List<ChatMessage> messages, String scorer) {
        this(id, prompt, expected, metadata, messages, scorer, null, null);
    }

    /** A multiple-choice prompt vignette: the right choice's index is {@code target}, or null when unknown. */
    public static Vignette multipleChoice(String id, String prompt, Choices choices, Integer target,
                                          Map<String, Object> metadata) {
        return new Vignette(id, prompt, target == null ? null : Integer.toString(target), metadata, List.of(), null,
                choices);
    }

    /** True when this vignette is multiple choice, scored by log-likelihood ({@link #choices}). */
    public boolean isMultipleChoice() {
        return choices != null;
    }

    /**
     * The choice index an expected answer names: a decimal index from 0 below {@code size}, or -1
     * when it names none.
     */
    public static int choiceIndex(String expected, int size) {
        if (expected == null || expected.isEmpty() || expected.length() > 9) {
            return -1;
        }
        for (int i = 0; i < expected.length(); i++) {
            if (expected.charAt(i) < '0' || expected.charAt(i) > '9') {
                return -1;
            }
        }
        int index = Integer.parseInt(expected);
        return index < size ? index : -1;
    }

    /** A prompt vignette with an expected answer and metadata. */
    public Vignette(String id, String prompt, String expected, Map<String, Object> metadata) {
        this(id, prompt, expected, metadata, List.of(), null);
    }

    /** A vignette with no expected answer and no metadata. */
    public Vignette(String id, String prompt) {
        this(id, prompt, null, Map.of());
    }

    /** True when this vignette runs something in a sandbox on the worker ({@link #sandbox}). */
    public boolean usesSandbox() {
        return sandbox != null;
    }

    /** True when this vignette is a chat ({@link #messages}) rather than a single prompt. */
    public boolean isChat() {
        return !messages.isEmpty();
    }

    /**
     * The turns to send after the spec's system message: {@code messages}, or the prompt as one
     * user message.
     */
    public List<ChatMessage> turns() {
        return messages.isEmpty() ? List.of(ChatMessage.user(prompt)) : messages;
    }

    /**
     * The prompt as people read it: the prompt itself, or the chat as {@code role: content} lines.
     */
    public String displayPrompt() {
        if (messages.isEmpty()) {
            return prompt;
        }
        StringBuilder b = new StringBuilder();
        for (ChatMessage m : messages) {
            if (b.length() > 0) {
                b.append('\n');
            }
            b.append(m.role()).append(": ").append(m.content());
        }
        return b.toString();
    }

    /**
     * This vignette with {@code before} (few-shot examples) put in front of its turns, after any
     * system messages its chat starts with: instructions stay first.
     */
    public Vignette withTurnsBefore(List<ChatMessage> before) {
        if (before.isEmpty()) {
            return this;
        }
        if (choices != null) {
            throw new IllegalArgumentException("vignette '" + id + "' is multiple choice, scored after a plain-text"
                    + " prompt: chat few-shot turns (--few-shot) cannot go before it; put examples in its prompt");
        }
        List<ChatMessage> own = turns();
        int systems = 0;
        while (systems < own.size() && "system".equals(own.get(systems).role())) {
            systems++;
        }
        List<ChatMessage> all = new java.util.ArrayList<>(before.size() + own.size());
        all.addAll(own.subList(0, systems));
        all.addAll(before);
        all.addAll(own.subList(systems, own.size()));
        return new Vignette(id, null, expected, metadata, all, scorer, null, sandbox);
    }
}

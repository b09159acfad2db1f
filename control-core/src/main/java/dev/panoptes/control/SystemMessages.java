package dev.panoptes.control;

import java.util.ArrayList;
import java.util.List;

/**
 * How the run's system prompt ({@code --system}) meets a vignette whose chat has a system message
 * of its own: they are joined into one system message, the run's first, then a blank line, then
 * the vignette's, so that a request never carries two system messages (strict chat templates, such
 * as those of Llama and Mistral models, refuse a second one) and neither instruction is dropped.
 * The request sent, the response cache's key, the dry run and the exports all use this one rule.
 * Stateless; any thread.
 */
public final class SystemMessages {
    /** What separates the run's system prompt from the vignette's own system message. */
    public static final String SEPARATOR = "\n\n";

    private SystemMessages() {
    }

    /**
     * The messages as sent: {@code turns} with the run's system prompt first, joined to the
     * vignette's own first system message when its turns start with one.
     *
     * @param system the run's system prompt, or null for none
     * @param turns  the vignette's turns (few-shot turns included), as they follow the system prompt
     */
    public static List<ChatMessage> join(String system, List<ChatMessage> turns) {
        if (system == null) {
            return turns;
        }
        List<ChatMessage> all = new ArrayList<>(turns.size() + 1);
        if (!turns.isEmpty() && "system".equals(turns.get(0).role())) {
            all.add(new ChatMessage("system", system + SEPARATOR + turns.get(0).content()));
            all.addAll(turns.subList(1, turns.size()));
        } else {
            all.add(new ChatMessage("system", system));
            all.addAll(turns);
        }
        return all;
    }
}

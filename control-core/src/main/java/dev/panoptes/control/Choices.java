package dev.panoptes.control;

import java.util.List;

/**
 * The choices of a multiple-choice vignette, scored by log-likelihood: each choice is a
 * continuation of the vignette's prompt, {@code delimiter + choice}, and the model's
 * log-probability of that continuation decides which one it picks (the highest for {@code acc},
 * the highest per character for {@code acc_norm}, as lm-evaluation-harness computes them). The
 * vignette's {@code expected} answer is the index of the right choice, from 0.
 *
 * <p>One choice is lm-eval's {@code loglikelihood} request: the vignette's one continuation (its
 * expected answer 0), scored {@code acc} by whether every token of it was the model's top one
 * ({@code is_greedy}), its log-likelihood kept for perplexity.
 *
 * @param texts     the choices, at least one, none empty; unmodifiable
 * @param delimiter what goes between the prompt and each choice (lm-eval's
 *                  {@code target_delimiter}, a space by default); may be empty, never null
 */
public record Choices(List<String> texts, String delimiter) {
    /** lm-eval's default {@code target_delimiter}. */
    public static final String DEFAULT_DELIMITER = " ";

    /** @throws IllegalArgumentException when there is no choice or one is empty */
    public Choices {
        Checks.notNull(texts, "choices");
        texts = List.copyOf(texts);
        if (texts.isEmpty()) {
            throw new IllegalArgumentException("a vignette asked by log-likelihood needs at least one choice (one is"
                    + " a continuation scored by whether it is the greedy one, two or more are multiple choice),"
                    + " got none");
        }
        for (int i = 0; i < texts.size(); i++) {
            if (texts.get(i).isEmpty()) {
                throw new IllegalArgumentException("choice " + i + " is empty; every choice needs text");
            }
        }
        delimiter = delimiter == null ? DEFAULT_DELIMITER : delimiter;
    }

    /** The choices with lm-eval's default delimiter, a space. */
    public Choices(List<String> texts) {
        this(texts, DEFAULT_DELIMITER);
    }

    /** The continuation scored for choice {@code i}: the delimiter, then the choice. */
    public String continuation(int i) {
        return delimiter + texts.get(i);
    }

    /** How many choices there are. */
    public int size() {
        return texts.size();
    }
}

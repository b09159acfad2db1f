package dev.panoptes.eval;

import dev.panoptes.control.Choices;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;

import java.util.Objects;

/**
 * One multiple-choice vignette to ask by log-likelihood: the log-probability of each choice's
 * continuation after the context. Sent as one text-completions request holding one prompt per
 * choice ({@code context + continuation}).
 *
 * @param context the text before every continuation: the spec's system message, when it has
 *                one, and a blank line, then the vignette's prompt
 * @param choices the choices, whose continuations are scored
 * @param params  the spec's model (and system message, already in {@code context}); never null
 */
public record LoglikelihoodRequest(String context, Choices choices, SpecParams params) {
    /** @throws NullPointerException when context or choices is null */
    public LoglikelihoodRequest {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(choices, "choices");
        params = params == null ? SpecParams.NONE : params;
    }

    /**
     * The request for a multiple-choice vignette with a spec's parameters.
     *
     * @throws IllegalArgumentException when the vignette is not multiple choice
     */
    public static LoglikelihoodRequest of(Vignette vignette, SpecParams params) {
        if (!vignette.isMultipleChoice()) {
            throw new IllegalArgumentException("vignette '" + vignette.id() + "' has no choices to score");
        }
        String context = params.system() == null ? vignette.prompt() : params.system() + "\n\n" + vignette.prompt();
        return new LoglikelihoodRequest(context, vignette.choices(), params);
    }

    /** The prompt sent for choice {@code i}: the context, then the choice's continuation. */
    public String prompt(int i) {
        return context + choices.continuation(i);
    }
}

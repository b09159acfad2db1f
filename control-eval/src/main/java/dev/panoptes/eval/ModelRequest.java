package dev.panoptes.eval;

import dev.panoptes.control.SpecParams;

import java.util.Objects;

/**
 * One prompt and the parameters to send it with.
 *
 * @param prompt the user message
 * @param params the spec's system message, temperature, max tokens and seed; never null
 */
public record ModelRequest(String prompt, SpecParams params) {
    public ModelRequest {
        Objects.requireNonNull(prompt, "prompt");
        params = params == null ? SpecParams.NONE : params;
    }
}

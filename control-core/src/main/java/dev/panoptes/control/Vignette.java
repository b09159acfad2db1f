package dev.panoptes.control;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One prompt of an eval suite.
 *
 * @param id       unique within its spec; results are keyed by it
 * @param prompt   the user message sent to the model; not empty
 * @param expected the reference answer, or null when the suite has none
 * @param metadata free-form JSON values (strings, numbers, booleans, lists, maps, nulls);
 *                 never null, empty when absent; unmodifiable
 */
public record Vignette(String id, String prompt, String expected, Map<String, Object> metadata) {
    /** @throws IllegalArgumentException when id or prompt is missing or empty */
    public Vignette {
        Checks.notEmpty(id, "vignette id");
        Checks.notEmpty(prompt, "prompt of vignette '" + id + "'");
        metadata = metadata == null || metadata.isEmpty()
                ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }

    /** A vignette with no expected answer and no metadata. */
    public Vignette(String id, String prompt) {
        this(id, prompt, null, Map.of());
    }
}

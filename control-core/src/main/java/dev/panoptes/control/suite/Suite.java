package dev.panoptes.control.suite;

import dev.panoptes.control.Vignette;

import java.util.List;
import java.util.Objects;

/**
 * An eval suite as loaded from a file: its vignettes in file order, and a digest of the file's
 * bytes so that a run over the same content gets the same job ids.
 *
 * @param name      a name for humans, usually the file name without its extension
 * @param vignettes at least one, with distinct ids; unmodifiable
 * @param sha256    hex SHA-256 of the suite's content
 */
public record Suite(String name, List<Vignette> vignettes, String sha256) {
    public Suite {
        Objects.requireNonNull(name, "name");
        vignettes = List.copyOf(vignettes);
        if (vignettes.isEmpty()) {
            throw new IllegalArgumentException("suite '" + name + "' has no vignettes");
        }
        Objects.requireNonNull(sha256, "sha256");
    }

    /** True when at least one vignette has an expected answer, so accuracy can be computed. */
    public boolean hasExpectedAnswers() {
        return vignettes.stream().anyMatch(v -> v.expected() != null);
    }
}

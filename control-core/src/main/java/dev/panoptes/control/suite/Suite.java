package dev.panoptes.control.suite;

import dev.panoptes.control.Vignette;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An eval suite as loaded from a file: its vignettes in file order, and a digest of the file's
 * bytes so that a run over the same content gets the same job ids.
 *
 * @param name      a name for humans, usually the file name without its extension
 * @param vignettes at least one, with distinct ids; unmodifiable
 * @param sha256    hex SHA-256 of the suite's content
 * @param lines     the file line of each vignette, in the same order, for messages; empty when
 *                  not known (a suite not read from a JSONL file)
 * @param notes     what a person should know about how the file was read (the fields its lines
 *                  hold that Panoptes does not use), one sentence each; empty when nothing
 */
public record Suite(String name, List<Vignette> vignettes, String sha256, List<Integer> lines, List<String> notes) {
    /** @throws IllegalArgumentException when there is no vignette, or lines are given but not one each */
    public Suite {
        Objects.requireNonNull(name, "name");
        vignettes = List.copyOf(vignettes);
        if (vignettes.isEmpty()) {
            throw new IllegalArgumentException("suite '" + name + "' has no vignettes");
        }
        Objects.requireNonNull(sha256, "sha256");
        // A reader's int line numbers stay ints (LineNumbers): a million boxed copies cost the collector.
        lines = lines instanceof LineNumbers numbers ? numbers.frozen() : List.copyOf(lines);
        notes = notes == null ? List.of() : List.copyOf(notes);
        if (!lines.isEmpty() && lines.size() != vignettes.size()) {
            throw new IllegalArgumentException("suite '" + name + "' has " + vignettes.size() + " vignettes but "
                    + lines.size() + " line numbers");
        }
    }

    /** A suite read without notes. */
    public Suite(String name, List<Vignette> vignettes, String sha256, List<Integer> lines) {
        this(name, vignettes, sha256, lines, List.of());
    }

    /** These vignettes, in place of this suite's, with its name, digest and notes. */
    public Suite withVignettes(List<Vignette> vignettes, List<Integer> lines) {
        return new Suite(name, vignettes, sha256, lines, notes);
    }

    /** A suite whose vignettes' lines are not known. */
    public Suite(String name, List<Vignette> vignettes, String sha256) {
        this(name, vignettes, sha256, List.of());
    }

    /** The file line of the vignette at {@code index}, when known. */
    public Optional<Integer> lineOf(int index) {
        return lines.isEmpty() ? Optional.empty() : Optional.of(lines.get(index));
    }

    /** True when at least one vignette has an expected answer, so accuracy can be computed. */
    public boolean hasExpectedAnswers() {
        return vignettes.stream().anyMatch(v -> v.expected() != null);
    }
}

package dev.panoptes.control.store;

import java.time.Instant;
import java.util.Objects;

/**
 * One scoring of a run's answers: the run's answers keep every scoring made of them, numbered
 * from 1 in the order they were made, and a reader shows one (by default the latest). The first
 * comes with the run; {@code rescore}, or a coordinator started again on the same run with
 * another scorer, adds the next, and never changes an earlier one.
 *
 * @param number    from 1, in the order the run's scorings were made
 * @param scorer    the scorer spec, such as {@code "exact"} or {@code "judge:gpt-4o"} (a vignette's
 *                  own scorer still overrides it for that vignette)
 * @param createdAt when the scoring was made
 * @param origin    what made it: {@link #RUN} (a coordinator, as it stored or resumed the run) or
 *                  {@link #RESCORE} (the {@code rescore} command)
 */
public record Scoring(int number, String scorer, Instant createdAt, String origin) {
    /** The origin of a scoring made by a coordinator's run. */
    public static final String RUN = "run";
    /** The origin of a scoring made by the {@code rescore} command. */
    public static final String RESCORE = "rescore";

    /** @throws IllegalArgumentException when the number is below 1 or a field is missing */
    public Scoring {
        if (number < 1) {
            throw new IllegalArgumentException("scorings are numbered from 1, got " + number);
        }
        Objects.requireNonNull(scorer, "scorer");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(origin, "origin");
    }

    /** "scoring 2 (exact, rescore, 2026-12-01T23:00:00Z)", for messages and headers. */
    public String describe() {
        return "scoring " + number + " (" + scorer + ", " + origin + ", " + createdAt + ")";
    }
}

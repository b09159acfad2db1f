package dev.panoptes.control.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One sitting of a run: a coordinator working on it from its start until it finished, was
 * interrupted, or died. A run resumed twice has three sittings; its duration is the sum of theirs,
 * not the wall span from its first start to its end (which counts the hours between sittings).
 *
 * <p>Immutable; any thread.
 *
 * @param number    1 for the run's first sitting, then 2, 3, ...
 * @param startedAt when the coordinator noted the run at this sitting's start
 * @param endedAt   when it ended; for a sitting whose end was not noted ({@code ended} false: the
 *                  coordinator was killed, or is still running), when it stored its last answer
 *                  (its start when it stored none)
 * @param answers   answers stored during the sitting
 * @param ended     true when the coordinator noted the sitting's end itself
 * @param stop      what stopped the sitting (the budget, or a gate), or null when nothing did
 */
public record RunSitting(int number, Instant startedAt, Instant endedAt, long answers, boolean ended, RunStop stop) {
    /** @throws NullPointerException when a time is missing */
    public RunSitting {
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(endedAt, "endedAt");
    }

    /** A sitting nothing stopped. */
    public RunSitting(int number, Instant startedAt, Instant endedAt, long answers, boolean ended) {
        this(number, startedAt, endedAt, answers, ended, null);
    }

    /** How long the sitting lasted; zero when the clock stepped back. */
    public Duration duration() {
        Duration d = Duration.between(startedAt, endedAt);
        return d.isNegative() ? Duration.ZERO : d;
    }

    /** The sum of the sittings' durations: the time coordinators spent on the run. */
    public static Duration total(List<RunSitting> sittings) {
        Duration sum = Duration.ZERO;
        for (RunSitting s : sittings) {
            sum = sum.plus(s.duration());
        }
        return sum;
    }
}

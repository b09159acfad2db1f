package dev.panoptes.control.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
 * @param unstored  what the sitting's model calls spent on answers never stored, one entry per
 *                  model ({@link UnstoredSpend}); empty when nothing was, or the sitting's end
 *                  was not noted (the coordinator was killed), or it ended before schema version 6
 */
public record RunSitting(int number, Instant startedAt, Instant endedAt, long answers, boolean ended, RunStop stop,
                         List<UnstoredSpend> unstored) {
    /** @throws NullPointerException when a time is missing */
    public RunSitting {
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(endedAt, "endedAt");
        unstored = unstored == null ? List.of() : List.copyOf(unstored);
    }

    /** A sitting that spent nothing on answers never stored. */
    public RunSitting(int number, Instant startedAt, Instant endedAt, long answers, boolean ended, RunStop stop) {
        this(number, startedAt, endedAt, answers, ended, stop, List.of());
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

    /** What the sittings spent on answers never stored, added up per model, in the order first met. */
    public static List<UnstoredSpend> unstored(List<RunSitting> sittings) {
        List<UnstoredSpend> all = new ArrayList<>();
        for (RunSitting s : sittings) {
            all.addAll(s.unstored());
        }
        return UnstoredSpend.sum(all);
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

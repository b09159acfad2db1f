package dev.panoptes.remote;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Seeded random schedules of the real coordinator ({@link ScheduleSimulation}): dispatch,
 * answers, failures of every scope, cancels, deadlines, redelivery, closes, drains, quarantine,
 * completions out of order, each interleaving chosen by the seed and every invariant checked after
 * every event.
 *
 * <p>CI runs a bounded number of seeds ({@code panoptes.schedule.seeds}, default 300, starting at
 * {@code panoptes.schedule.firstSeed}, default 1); {@code mvn -pl control-remote -am verify
 * -Pschedule-soak} runs many more. A failing seed names itself; {@code -Dpanoptes.schedule.seed=N}
 * replays exactly that one. With {@code -Dpanoptes.schedule.keepGoing=true} every seed runs and
 * the failures are counted by the invariant they broke.
 */
class RandomizedScheduleTest {
    private static final int FAULT_EVENTS = 400;

    @Test
    void everyJobEndsExactlyOnceAndNoSlotLeaksUnderRandomSchedules() throws IOException {
        Long only = Long.getLong("panoptes.schedule.seed");
        long first = only != null ? only : Long.getLong("panoptes.schedule.firstSeed", 1);
        long count = only != null ? 1 : Long.getLong("panoptes.schedule.seeds", 300);
        boolean keepGoing = Boolean.getBoolean("panoptes.schedule.keepGoing");
        long startNs = System.nanoTime();
        long events = 0;
        long jobs = 0;
        long storeFailures = 0;
        List<AssertionError> failures = new ArrayList<>();
        Map<String, Integer> kinds = new TreeMap<>();
        for (long seed = first; seed < first + count; seed++) {
            try {
                ScheduleSimulation.Outcome outcome = new ScheduleSimulation(seed).play(FAULT_EVENTS);
                events += outcome.events();
                jobs += outcome.jobs();
                storeFailures += outcome.storeFailures();
            } catch (AssertionError e) {
                if (!keepGoing) {
                    throw e;
                }
                failures.add(e);
                kinds.merge(kind(e.getMessage()), 1, Integer::sum);
            }
        }
        double seconds = (System.nanoTime() - startNs) / 1e9;
        System.out.printf("MEASURED randomized schedules: %d seeds from %d, %d fault events, %d jobs, %d failed store"
                + " writes, in %.2f s: %.0f schedules/s, %.0f events/s%n", count, first, events, jobs, storeFailures,
                seconds, count / seconds, events / seconds);
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.size() + " of " + count + " seeds broke an invariant " + kinds
                    + "; the first:\n" + failures.get(0).getMessage());
        }
    }

    /** The broken invariant of a failure message, without its numbers and names. */
    private static String kind(String message) {
        String what = message.substring(message.indexOf("events: ") + 8, message.indexOf('\n'));
        if (what.contains("slots held by cancelled")) {
            return "slot count drifted";
        }
        if (what.contains("dispatched twice")) {
            return "failed as dispatched twice";
        }
        if (what.contains("failed for good")) {
            return "failed for good without its own fault";
        }
        if (what.contains("did not end")) {
            return "run did not end";
        }
        return what.replaceAll("[0-9]+", "N");
    }
}

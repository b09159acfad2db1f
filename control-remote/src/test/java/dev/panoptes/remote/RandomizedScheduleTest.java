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
 *
 * <p>Over the default seeds, each kind of fault whose handling the schedules check must have
 * happened at least once (refused dispatches, worker-scoped failures free and charged, timeouts,
 * jobs given up on, a timeout's strike quarantining a worker, batches failed midway, refused
 * failure records, duplicates, a full batch of records, a parked redelivery let go of): a change that stopped a schedule from
 * reaching one would leave its check idle.
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
        long partialBatches = 0;
        long refusedFailures = 0;
        long duplicates = 0;
        int largestBatch = 0;
        long unparks = 0;
        AttemptAccounting.Seen seen = new AttemptAccounting.Seen(0, 0, 0, 0, 0, 0, 0);
        List<AssertionError> failures = new ArrayList<>();
        Map<String, Integer> kinds = new TreeMap<>();
        for (long seed = first; seed < first + count; seed++) {
            try {
                ScheduleSimulation.Outcome outcome = new ScheduleSimulation(seed).play(FAULT_EVENTS);
                events += outcome.events();
                jobs += outcome.jobs();
                storeFailures += outcome.storeFailures();
                partialBatches += outcome.partialBatches();
                refusedFailures += outcome.refusedFailures();
                duplicates += outcome.duplicates();
                largestBatch = Math.max(largestBatch, outcome.largestBatchRecords());
                unparks += outcome.unparks();
                seen = seen.plus(outcome.seen());
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
        System.out.printf("MEASURED randomized schedules saw: %s, %d batches failed midway, %d failure records"
                + " refused, %d duplicates, at most %d records in a batch, %d parked redeliveries let go%n", seen,
                partialBatches, refusedFailures, duplicates, largestBatch, unparks);
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.size() + " of " + count + " seeds broke an invariant " + kinds
                    + "; the first:\n" + failures.get(0).getMessage());
        }
        if (only == null && count >= 300) {
            List<String> idle = new ArrayList<>();
            idleUnless(idle, seen.refusals() > 0, "a refused dispatch");
            idleUnless(idle, seen.freeWorkerFaults() > 0, "a worker-scoped failure within the free ones");
            idleUnless(idle, seen.chargedWorkerFaults() > 0, "a worker-scoped failure beyond the free ones");
            idleUnless(idle, seen.timeouts() > 0, "a timeout");
            idleUnless(idle, seen.gaveUp() > 0, "a job given up on");
            idleUnless(idle, seen.timeoutQuarantines() > 0, "a worker quarantined by a timeout's strike");
            idleUnless(idle, partialBatches > 0, "a batch failed midway");
            idleUnless(idle, refusedFailures > 0, "a failure record refused");
            idleUnless(idle, duplicates > 0, "a duplicate");
            idleUnless(idle, unparks > 0, "a redelivery parked behind an attempt its worker let go of");
            idleUnless(idle, largestBatch > FlakyStore.BATCH_RECORDS, "a batch of answers past the record limit");
            if (!idle.isEmpty()) {
                throw new AssertionError(count + " schedules from seed " + first + " never had " + idle
                        + ", so the checks of how the run handles them were idle");
            }
        }
    }

    private static void idleUnless(List<String> idle, boolean seen, String what) {
        if (!seen) {
            idle.add(what);
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

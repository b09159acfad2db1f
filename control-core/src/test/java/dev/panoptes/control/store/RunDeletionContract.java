package dev.panoptes.control.store;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link JdbcResultStore#deleteRun} promises, checked on any store: the SQLite and the
 * PostgreSQL test classes run the same checks.
 */
final class RunDeletionContract {
    static final String A = "aaaaaaaaaaaaaaaa";
    static final String B = "bbbbbbbbbbbbbbbb";

    private RunDeletionContract() {
    }

    /** Two runs, each noted, answered (two answers, scored), rescored once, with a failed job and worker events. */
    static void storeTwoRuns(JdbcResultStore store) {
        for (String run : List.of(A, B)) {
            store.recordRun(new RunEntry(run, "s.jsonl", List.of("m"), "exact", 1, 3, Instant.EPOCH));
            Job job = job(run, 0);
            store.record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("q1", "4"),
                    new ResponseRecord("q2", "5"))), "w1");
            store.rescore(run, "includes", r -> new ScoreEntry("includes", 1.0, null));
            store.recordFailure(job(run, 1), "refused", 3);
            store.addWorkerEvents(run, "w1", 2, 1);
        }
    }

    static Job job(String run, int index) {
        List<Vignette> vignettes = index == 0
                ? List.of(new Vignette("q1", "2+2?", "4", Map.of()), new Vignette("q2", "2+2?", "4", Map.of()))
                : List.of(new Vignette("q3", "3+3?", "6", Map.of()));
        return new Job(JobId.of(run + "-m-e0-000" + index),
                new EvalSpec("s", vignettes, SpecParams.NONE.withModel("m")), run, 0);
    }

    /** Deleting A removes every row of A, leaves B exactly as it was, and a second delete removes nothing. */
    static void checkDeleteRemovesTheRunAndNothingOfAnother(Supplier<JdbcResultStore> open) {
        try (JdbcResultStore store = open.get().withScoring(new RunScoring("exact"))) {
            storeTwoRuns(store);
            String before = snapshot(store, B);

            RunDeletion removed = store.deleteRun(A);

            assertThat(removed).isEqualTo(new RunDeletion(A, 2, 4, 2, 1, 1, true));
            assertThat(removed.nothing()).as("a deletion that removed rows").isFalse();
            // Each kind of row alone makes a deletion something (runs delete says what it removed).
            assertThat(List.of(new RunDeletion(A, 1, 0, 0, 0, 0, false), new RunDeletion(A, 0, 1, 0, 0, 0, false),
                    new RunDeletion(A, 0, 0, 1, 0, 0, false), new RunDeletion(A, 0, 0, 0, 1, 0, false),
                    new RunDeletion(A, 0, 0, 0, 0, 1, false), new RunDeletion(A, 0, 0, 0, 0, 0, true)))
                    .noneMatch(RunDeletion::nothing);
            assertThat(store.runs()).extracting(RunEntry::runId).containsExactly(B);
            assertThat(store.recordCount(A)).isZero();
            assertThat(store.scorings(A)).isEmpty();
            assertThat(store.workerEvents(A)).isEmpty();
            List<String> failedRuns = new ArrayList<>();
            store.forEachFailure(f -> failedRuns.add(f.runId()));
            assertThat(failedRuns).containsExactly(B);
            assertThat(snapshot(store, B)).isEqualTo(before);

            assertThat(store.deleteRun(A).nothing()).as("deleting again removes nothing").isTrue();
            assertThat(store.deleteRun("not-a-run").nothing()).isTrue();
            assertThat(snapshot(store, B)).isEqualTo(before);
        }
    }

    /** A run deleted and then run again starts afresh: its answers are new, scored into a new scoring 1. */
    static void checkADeletedRunCanBeStoredAgain(Supplier<JdbcResultStore> open) {
        try (JdbcResultStore store = open.get().withScoring(new RunScoring("exact"))) {
            storeTwoRuns(store);
            store.deleteRun(A);
            Job job = job(A, 0);
            ResultStore.Receipt receipt = store.record(job, new JobOutcome(job.id(),
                    List.of(new ResponseRecord("q1", "4"))), "w2");
            assertThat(receipt).isEqualTo(new ResultStore.Receipt(1, 0));
            assertThat(store.scorings(A)).extracting(Scoring::number, Scoring::scorer)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "exact"));
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(A, records::add);
            assertThat(records).singleElement().satisfies(r -> assertThat(r.score().score()).isEqualTo(1.0));
        }
        try (JdbcResultStore reopened = open.get()) {
            assertThat(reopened.recordCount(A)).isEqualTo(1);
        }
    }

    /** Everything the store tells of a run, as text, to compare before and after. */
    private static String snapshot(JdbcResultStore store, String run) {
        StringBuilder sb = new StringBuilder();
        store.runs().stream().filter(r -> r.runId().equals(run)).forEach(r -> sb.append(r).append('\n'));
        for (Scoring s : store.scorings(run)) {
            sb.append(s).append('\n');
            store.forEachRecord(run, s.number(), r -> sb.append(r.jobId()).append(' ').append(r.record())
                    .append(' ').append(r.score()).append('\n'));
        }
        store.forEachFailure(f -> {
            if (run.equals(f.runId())) {
                sb.append(f).append('\n');
            }
        });
        sb.append(store.workerEvents(run));
        return sb.toString();
    }
}

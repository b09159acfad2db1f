package dev.panoptes.control.cache;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.AnswerCache;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The response cache against a SQLite store: what it serves, what it cuts, what it leaves to the
 * models, and that serving twice stores nothing twice.
 */
class ResponseCacheTest {
    private static final SpecParams ZERO = new SpecParams(null, 0.0, null, null).withModelSource("model-id test");
    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

    @TempDir
    Path dir;
    private JdbcResultStore store;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private JdbcResultStore store() {
        if (store == null) {
            store = JdbcResultStore.openSqlite(dir.resolve("r.db"));
        }
        return store;
    }

    private static Suite suite(String sha, int n, String... extra) {
        List<Vignette> vignettes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            vignettes.add(new Vignette("q" + i, "question " + i, "answer " + i, java.util.Map.of()));
        }
        for (String id : extra) {
            vignettes.add(new Vignette(id, "new question " + id, null, java.util.Map.of()));
        }
        return new Suite("s", vignettes, sha);
    }

    private static JobPlan plan(Suite suite, SpecParams params, String label) {
        return JobPlan.of(suite, params, 2, label, List.of("m"), 1);
    }

    /** Answers every job of the plan as a model would, with usage, as worker "w". */
    private void answer(JobPlan plan) {
        for (Job job : plan.jobs()) {
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                records.add(new ResponseRecord(v.id(), "re: " + v.prompt(), "m-2026", "stop", 12L, new Usage(5, 3)));
            }
            store().record(job, new JobOutcome(job.id(), records), "w");
        }
    }

    private ResponseCache cache(CachePolicy policy, Instant now) {
        return new ResponseCache(store().answerCache(), policy, Clock.fixed(now, ZoneOffset.UTC));
    }

    private List<StoredRecord> records(String runId) {
        List<StoredRecord> records = new ArrayList<>();
        store().forEachRecord(runId, records::add);
        return records;
    }

    @Test
    void anotherRunOfTheSameRequestsIsServedWholeAndMarkedWithTheRunItCopies() throws Exception {
        JobPlan first = plan(suite("aa", 6), ZERO, "first");
        answer(first);
        JobPlan second = plan(suite("aa", 6), ZERO, "second");

        CachePlan served = cache(CachePolicy.defaults(), NOW).serve(second.jobs());

        assertThat(served.served()).isEqualTo(6);
        assertThat(served.jobs()).isEqualTo(second.jobs());
        assertThat(served.reduced()).isEmpty();
        assertThat(store().completedAmong(second.jobs())).hasSize(3);
        assertThat(records(second.runId())).hasSize(6).allSatisfy(r -> {
            assertThat(r.cachedFrom()).isEqualTo(first.runId());
            assertThat(r.workerId()).isEqualTo(AnswerCache.WORKER_ID);
            assertThat(r.record().response()).isEqualTo("re: question " + r.record().vignetteId().substring(1));
            assertThat(r.record().usage()).isEqualTo(new Usage(5, 3));
            assertThat(r.record().model()).isEqualTo("m-2026");
            assertThat(r.record().latencyMs()).as("no model was called").isNull();
        });
        assertThat(served.describe()).contains("6 answers served from the database (1 source run)")
                .contains("0 of 6 left to ask");
    }

    @Test
    void aJobWithSomeAnswersFoundGoesOnHoldingOnlyTheOthersAndIsNotTakenForComplete() throws Exception {
        answer(plan(suite("aa", 3), ZERO, "first"));
        // q0 q1 | q2 new: the second job has one answer in the store and one to ask.
        JobPlan second = plan(suite("bb", 3, "n1"), ZERO, "second");

        CachePlan served = cache(CachePolicy.defaults(), NOW).serve(second.jobs());

        assertThat(served.served()).isEqualTo(3);
        Job cut = served.jobs().get(1);
        assertThat(cut.id()).isEqualTo(second.jobs().get(1).id());
        assertThat(cut.spec().vignettes()).extracting(Vignette::id).containsExactly("n1");
        assertThat(served.reduced()).containsExactly(cut.id());
        // The store counts the job's one cached record against its one vignette left...
        assertThat(store().completedAmong(served.jobs())).contains(cut.id());
        // ...the scheduler's view does not.
        assertThat(served.storeFor(store()).completedAmong(served.jobs()))
                .containsExactly(second.jobs().get(0).id());
    }

    @Test
    void servingAgainAfterAnInterruptionStoresNothingTwice() throws Exception {
        answer(plan(suite("aa", 4), ZERO, "first"));
        JobPlan second = plan(suite("aa", 4), ZERO, "second");
        cache(CachePolicy.defaults(), NOW).serve(second.jobs().subList(0, 1));

        CachePlan again = cache(CachePolicy.defaults(), NOW).serve(second.jobs());

        assertThat(again.served()).isEqualTo(2);
        assertThat(again.looked()).isEqualTo(2);
        assertThat(records(second.runId())).hasSize(4);
        assertThat(store().duplicateCount()).isZero();
    }

    @Test
    void temperatureAboveZeroNoTemperatureAndNoCacheAreNeverServed() throws Exception {
        for (SpecParams params : List.of(new SpecParams(null, 0.7, null, null), SpecParams.NONE)) {
            answer(plan(suite("aa", 2), params, "first"));
            JobPlan second = plan(suite("aa", 2), params, "second");
            CachePlan served = cache(CachePolicy.defaults(), NOW).serve(second.jobs());
            assertThat(served.served()).isZero();
            assertThat(served.jobs()).isEqualTo(second.jobs());
        }
        answer(plan(suite("aa", 2), ZERO, "first"));
        assertThat(cache(CachePolicy.off(), NOW).serve(plan(suite("aa", 2), ZERO, "second").jobs()).served())
                .isZero();
        assertThat(store().recordCount()).isEqualTo(6);
    }

    @Test
    void anAnswerOlderThanTheMaximumAgeIsNotServed() throws Exception {
        answer(plan(suite("aa", 2), ZERO, "first"));
        JobPlan second = plan(suite("aa", 2), ZERO, "second");
        Instant later = Instant.now().plus(Duration.ofDays(2));

        assertThat(cache(CachePolicy.maxAge(Duration.ofDays(1)), later).serve(second.jobs()).served()).isZero();
        assertThat(cache(CachePolicy.maxAge(Duration.ofDays(3)), later).serve(second.jobs()).served()).isEqualTo(2);
    }

    @Test
    void aFailedAnswerIsNotServedAndACachedCopyIsNeverASource() throws Exception {
        JobPlan first = plan(suite("aa", 2), ZERO, "first");
        Job job = first.jobs().get(0);
        store().record(job, new JobOutcome(job.id(), List.of(new ResponseRecord("q0", "re: question 0"),
                ResponseRecord.failed("q1", "m", 3L, "HTTP 400: too long"))), "w");
        JobPlan second = plan(suite("aa", 2), ZERO, "second");
        CachePlan served = cache(CachePolicy.defaults(), NOW).serve(second.jobs());
        assertThat(served.served()).isEqualTo(1);
        assertThat(served.jobs().get(0).spec().vignettes()).extracting(Vignette::id).containsExactly("q1");

        // The second run's copy of q0 is not a source: only the first run's answer is.
        JobPlan third = plan(suite("aa", 2), ZERO, "third");
        cache(CachePolicy.defaults(), NOW).serve(third.jobs());
        assertThat(records(third.runId())).singleElement()
                .satisfies(r -> assertThat(r.cachedFrom()).isEqualTo(first.runId()));
    }

    @Test
    void aRunThatNamesNoModelIsLeftAsItIs() throws Exception {
        JobPlan unnamed = JobPlan.of(suite("aa", 2), ZERO, 2, "x");
        answer(unnamed);
        CachePlan served = cache(CachePolicy.defaults(), NOW).serve(JobPlan.of(suite("aa", 2), ZERO, 2, "y").jobs());
        assertThat(served.served()).isZero();
        assertThat(Set.copyOf(served.jobs())).hasSize(1);
        assertThat(served.reduced()).isEmpty();
        assertThat(JobId.of(served.jobs().get(0).id().value())).isNotNull();
    }
}

package dev.panoptes.control.schedule;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.store.InMemoryResultStore;
import dev.panoptes.control.store.JobFailure;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ModelRoutingTest {
    private final WorkerSet source = new WorkerSet();
    private final InMemoryResultStore store = new InMemoryResultStore();
    private final SchedulerOptions fast = SchedulerOptions.defaults()
            .withRetryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
            .withWaitForWorkers(Duration.ofSeconds(10))
            .withPollInterval(Duration.ofMillis(10));

    /** A worker that serves the given models and answers every job at once, noting what it got. */
    private static final class ModelWorker implements WorkerHandle {
        private final String id;
        private final int capacity;
        private final Set<String> models;
        final List<Job> received = new CopyOnWriteArrayList<>();

        ModelWorker(String id, int capacity, String... models) {
            this.id = id;
            this.capacity = capacity;
            this.models = new LinkedHashSet<>(List.of(models));
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public Set<String> models() {
            return models;
        }

        @Override
        public int capacity() {
            return capacity;
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            received.add(job);
            return CompletableFuture.completedFuture(TestJobs.echo(job));
        }

        Set<String> modelsReceived() {
            Set<String> seen = new LinkedHashSet<>();
            received.forEach(j -> seen.add(j.model()));
            return seen;
        }
    }

    private ModelWorker start(String id, int capacity, String... models) {
        ModelWorker w = new ModelWorker(id, capacity, models);
        source.add(w);
        return w;
    }

    /** {@code count} one-vignette jobs asking for {@code model} (null for any). */
    private static List<Job> jobs(String prefix, String model, int count) {
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            jobs.add(new Job(JobId.of(prefix + "-" + i), new EvalSpec("t", List.of(new Vignette("v0", "p" + i)),
                    SpecParams.NONE.withModel(model))));
        }
        return jobs;
    }

    private static List<Job> concat(List<Job> a, List<Job> b, List<Job> c) {
        List<Job> all = new ArrayList<>(a);
        all.addAll(b);
        all.addAll(c);
        return all;
    }

    @Test
    void aJobNamingAModelGoesOnlyToWorkersThatServeIt() throws Exception {
        ModelWorker wa = start("wa", 2, "a");
        ModelWorker wb = start("wb", 2, "b");
        ModelWorker wab = start("wab", 1, "a", "b");
        ModelWorker any = start("any", 3);

        RunReport report = new Scheduler(source, store, fast)
                .run(concat(jobs("a", "a", 40), jobs("b", "b", 40), jobs("n", null, 40)));

        assertThat(report.allCompleted()).isTrue();
        assertThat(report.completed()).isEqualTo(120);
        assertThat(wa.modelsReceived()).isSubsetOf("a", null).contains("a");
        assertThat(wb.modelsReceived()).isSubsetOf("b", null).contains("b");
        assertThat(wab.modelsReceived()).isSubsetOf("a", "b", null);
        assertThat(any.received).extracting(Job::model).containsOnlyNulls();
        assertThat(store.recordCount()).isEqualTo(120);
    }

    @Test
    void aJobNamingNoModelGoesToAnyWorker() throws Exception {
        ModelWorker wa = start("wa", 1, "a");
        ModelWorker wb = start("wb", 1, "b");
        ModelWorker any = start("any", 1);

        RunReport report = new Scheduler(source, store, fast).run(jobs("n", null, 30));

        assertThat(report.allCompleted()).isTrue();
        // The first pass fills one slot on each worker, round-robin.
        assertThat(wa.received).isNotEmpty();
        assertThat(wb.received).isNotEmpty();
        assertThat(any.received).isNotEmpty();
        assertThat(report.completedByWorker()).containsOnlyKeys("wa", "wb", "any");
    }

    @Test
    void aWorkerThatNamedNoModelsGetsNoJobThatNamesOne() throws Exception {
        ModelWorker any = start("any", 4);
        ModelWorker wa = start("wa", 1, "a");

        RunReport report = new Scheduler(source, store, fast).run(jobs("a", "a", 25));

        assertThat(report.allCompleted()).isTrue();
        assertThat(any.received).isEmpty();
        assertThat(wa.received).hasSize(25);
        assertThat(report.completedByWorker()).containsOnlyKeys("wa");
    }

    @Test
    void jobsForAModelNoConnectedWorkerServesFailAfterTheWaitNamingTheModelAndTheWorkers() throws Exception {
        ModelWorker wa = start("wa", 2, "a");
        ModelWorker any = start("any", 1);
        List<String> failedByListener = new CopyOnWriteArrayList<>();
        ProgressListener listener = new ProgressListener() {
            @Override
            public void onFailed(Job job, String reason, int attempts) {
                failedByListener.add(job.id().value());
            }
        };
        SchedulerOptions options = fast.withWaitForWorkers(Duration.ofMillis(200)).withListener(listener);

        RunReport report = new Scheduler(source, store, options)
                .run(concat(jobs("a", "a", 4), jobs("x", "x", 3), List.of()));

        assertThat(report.completed()).isEqualTo(4);
        assertThat(wa.received).extracting(Job::model).containsOnly("a");
        assertThat(any.received).isEmpty();
        assertThat(report.failed()).hasSize(3).allSatisfy(f -> {
            assertThat(f.jobId().value()).startsWith("x-");
            assertThat(f.attempts()).isZero();
            assertThat(f.reason())
                    .contains("no connected worker served model 'x'")
                    .contains("wa serves a")
                    .contains("any named no models")
                    .contains("limit 200 ms")
                    .contains("start workers whose model API serves it");
        });
        assertThat(report.elapsed()).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(failedByListener).containsExactlyInAnyOrder("x-0", "x-1", "x-2");
        List<JobFailure> stored = new ArrayList<>();
        store.forEachFailure(stored::add);
        assertThat(stored).extracting(f -> f.jobId().value()).containsExactlyInAnyOrder("x-0", "x-1", "x-2");
    }

    @Test
    void theListenerHearsEveryFewSecondsThatNoWorkerServesTheWaitingModels() {
        List<String> calls = new ArrayList<>();
        ProgressListener listener = new ProgressListener() {
            @Override
            public void onNoWorkerServes(Duration waited, Set<String> models, List<WorkerHandle> workers) {
                calls.add(waited.toSeconds() + "s " + models + " " + workers.stream().map(WorkerHandle::id).toList());
            }

            @Override
            public void onWaitingForWorkers(Duration waited) {
                calls.add("waiting for workers");
            }
        };
        SchedulerOptions options = fast.withWaitForWorkers(Duration.ofSeconds(12)).withListener(listener);
        WorkerWait wait = new WorkerWait(options);
        Quarantine quarantine = new Quarantine(options);
        List<WorkerHandle> workers = List.of(new ModelWorker("wa", 1, "a"), new ModelWorker("any", 1));
        Set<String> wanted = Set.of("x");
        long start = 1_000_000L;

        assertThat(wait.waiting(start, workers, List.of(), quarantine, 3, wanted)).isNull();
        assertThat(wait.waiting(start + TimeUnit.SECONDS.toNanos(4), workers, List.of(), quarantine, 3, wanted))
                .isNull();
        assertThat(calls).isEmpty();

        assertThat(wait.waiting(start + TimeUnit.SECONDS.toNanos(5), workers, List.of(), quarantine, 3, wanted))
                .isNull();
        assertThat(calls).containsExactly("5s [x] [wa, any]");
        assertThat(wait.waiting(start + TimeUnit.SECONDS.toNanos(10), workers, List.of(), quarantine, 3, wanted))
                .isNull();
        assertThat(calls).containsExactly("5s [x] [wa, any]", "10s [x] [wa, any]");

        String reason = wait.waiting(start + TimeUnit.SECONDS.toNanos(12), workers, List.of(), quarantine, 3, wanted);
        assertThat(reason).isEqualTo("no connected worker served model 'x' for 12 s (limit 12 s)"
                + " (connected: wa serves a; any named no models); start workers whose model API serves it");
    }

    @Test
    void modelsAreDescribedForPeople() {
        assertThat(WorkerWait.describeModels(Set.of("x"))).isEqualTo("model 'x'");
        assertThat(WorkerWait.describeModels(new LinkedHashSet<>(List.of("x", "y")))).isEqualTo("models 'x', 'y'");
        Set<String> onlyAny = new LinkedHashSet<>();
        onlyAny.add(null);
        assertThat(WorkerWait.describeModels(onlyAny)).isEqualTo("jobs that name no model");
    }

    @Test
    void aWorkerServesJobsNamingNoModelAndJobsNamingOneOfItsModels() {
        ModelWorker wa = new ModelWorker("wa", 1, "a");
        ModelWorker none = new ModelWorker("none", 1);

        assertThat(wa.serves(null)).isTrue();
        assertThat(wa.serves("a")).isTrue();
        assertThat(wa.serves("b")).isFalse();
        assertThat(none.serves(null)).isTrue();
        assertThat(none.serves("a")).isFalse();
    }
}

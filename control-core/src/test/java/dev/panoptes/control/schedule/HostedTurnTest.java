package dev.panoptes.control.schedule;

import dev.panoptes.control.HandOffBatch;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Answers delivered by a {@linkplain HandOffBatch#openHost() host} (as a selector thread
 * completing its pass's futures in direct mode is): while the run's thread waits with the turn
 * free, the host runs the answers and the dispatches they free slots for on its own thread, and
 * the store's acknowledgements wait for the next host's turn while jobs are in flight; while
 * the run's thread holds the turn, the host queues them and goes on, and the run's thread runs
 * them; what a hosted turn throws ends the run on the run's thread.
 */
class HostedTurnTest {
    private static final long WAIT_MS = 10_000;

    /** A worker whose answers the test gives; it records on which thread each job was dispatched. */
    private static final class HostedWorker implements WorkerHandle {
        final int capacity;
        final Map<String, CompletableFuture<JobOutcome>> replies = new ConcurrentHashMap<>();
        final Map<String, Job> jobs = new ConcurrentHashMap<>();
        final Map<String, String> dispatchedOn = new ConcurrentHashMap<>();
        /** When set, the dispatch of this job blocks (on the run's turn) until {@link #release} counts down. */
        volatile String blockOn;
        final CountDownLatch blocked = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        HostedWorker(int capacity) {
            this.capacity = capacity;
        }

        @Override
        public String id() {
            return "hosted";
        }

        @Override
        public int capacity() {
            return capacity;
        }

        @Override
        public CompletableFuture<JobOutcome> dispatch(Job job) {
            String id = job.id().toString();
            dispatchedOn.put(id, Thread.currentThread().getName());
            CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
            jobs.put(id, job);
            replies.put(id, reply);
            if (id.equals(blockOn)) {
                blocked.countDown();
                try {
                    assertThat(release.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return reply;
        }
    }

    private ExecutorService runThread;
    private ExecutorService host;

    @BeforeEach
    void start() {
        runThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "run-thread"));
        host = Executors.newSingleThreadExecutor(r -> new Thread(r, "host-thread"));
    }

    @AfterEach
    void stop() throws InterruptedException {
        runThread.shutdownNow();
        host.shutdownNow();
        assertThat(runThread.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        assertThat(host.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** The thread each stored answer was told to the run on, by job id. */
    private final Map<String, String> storedOn = new ConcurrentHashMap<>();

    private SchedulerOptions options() {
        // A long poll: the run's thread wakes only when told to, so the host's turns are the test's.
        return SchedulerOptions.defaults().withPollInterval(Duration.ofSeconds(30))
                .withJobTimeout(Duration.ofMinutes(5)).withSkipCompleted(false)
                .withListener(new ProgressListener() {
                    @Override
                    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome,
                                            ResultStore.Receipt receipt) {
                        storedOn.put(job.id().toString(), Thread.currentThread().getName());
                    }
                });
    }

    @Test
    void answersDeliveredWhileTheRunWaitsAreDecidedAndDispatchedOnTheHost() throws Exception {
        HostedWorker worker = new HostedWorker(1);
        WorkerSet pool = new WorkerSet();
        pool.add(worker);
        List<Job> jobs = TestJobs.jobs("h", 4);
        InMemoryResultStore store = new InMemoryResultStore();
        SchedulerRun run = new SchedulerRun(pool, store, options(), jobs, System::nanoTime);
        Future<RunReport> report = runThread.submit(() -> run.finish(run.execute()));
        for (int i = 0; i < jobs.size(); i++) {
            String id = jobs.get(i).id().toString();
            // From the second answer on, the store's word on the one before waits in the queue,
            // not run: it did not wake the run's thread, as the next job is in flight.
            int queued = i == 0 ? 0 : 1;
            waitFor(() -> worker.replies.containsKey(id) && run.queuedEvents() == queued && run.awaitingEvents(),
                    "job " + id + " dispatched, the run waiting, " + queued + " event queued");
            assertThat(storedOn).hasSize(Math.max(0, i - 1));
            host.submit(() -> completeAsHost(worker, id)).get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        RunReport done = report.get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertThat(done.completed()).isEqualTo(4);
        assertThat(store.completedAmong(jobs)).hasSize(4);
        // The first job went out before any answer; each later one was freed by an answer the host ran.
        assertThat(worker.dispatchedOn).containsEntry("h-0", "run-thread")
                .containsEntry("h-1", "host-thread").containsEntry("h-2", "host-thread")
                .containsEntry("h-3", "host-thread");
        // Each store acknowledgement ran in the next host's turn. The last one, with nothing in
        // flight, is not left waiting for a host that will not come: the run's last writes do not
        // linger, so it is run either by the host's own turn, if it arrives before that turn's
        // round, or by the run's thread, which the turn wakes as nothing is in flight; either way
        // the run ended (the report above).
        assertThat(storedOn).containsEntry("h-0", "host-thread").containsEntry("h-1", "host-thread")
                .containsEntry("h-2", "host-thread");
        assertThat(storedOn.get("h-3")).isIn("host-thread", "run-thread");
    }

    @Test
    void anAnswerDeliveredWhileTheRunHoldsItsTurnIsQueuedAndRunOnTheRunsThread() throws Exception {
        HostedWorker worker = new HostedWorker(2);
        worker.blockOn = "q-1";
        WorkerSet pool = new WorkerSet();
        pool.add(worker);
        List<Job> jobs = TestJobs.jobs("q", 3);
        InMemoryResultStore store = new InMemoryResultStore();
        SchedulerRun run = new SchedulerRun(pool, store, options(), jobs, System::nanoTime);
        Future<RunReport> report = runThread.submit(() -> run.finish(run.execute()));
        // The run's thread is inside the dispatch of q-1, holding its turn.
        assertThat(worker.blocked.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        // The host neither waits for the turn nor runs the answer: it queues it and goes on.
        host.submit(() -> completeAsHost(worker, "q-0")).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertThat(run.queuedEvents()).isEqualTo(1);
        assertThat(worker.replies).doesNotContainKey("q-2");
        worker.release.countDown();
        // The run's thread ran the queued answer, which freed the slot q-2 went to.
        waitFor(() -> worker.replies.containsKey("q-2"), "q-2 dispatched");
        assertThat(worker.dispatchedOn).containsEntry("q-2", "run-thread");
        for (String id : List.of("q-1", "q-2")) {
            waitFor(run::awaitingEvents, "the run waiting");
            host.submit(() -> completeAsHost(worker, id)).get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        assertThat(report.get(WAIT_MS, TimeUnit.MILLISECONDS).completed()).isEqualTo(3);
        assertThat(store.completedAmong(jobs)).hasSize(3);
    }

    @Test
    void whatAHostedTurnThrowsEndsTheRunOnTheRunsThread() throws Exception {
        HostedWorker worker = new HostedWorker(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        // Fails without telling its listeners: only a turn's own check of it finds out.
        WorkerSource pool = new WorkerSource() {
            @Override
            public List<WorkerHandle> snapshot() {
                return List.of(worker);
            }

            @Override
            public Throwable failure() {
                return failure.get();
            }
        };
        List<Job> jobs = TestJobs.jobs("f", 2);
        SchedulerRun run = new SchedulerRun(pool, new InMemoryResultStore(), options(), jobs, System::nanoTime);
        Future<RunReport> report = runThread.submit(() -> run.finish(run.execute()));
        waitFor(() -> worker.replies.containsKey("f-0") && run.awaitingEvents(), "f-0 dispatched, run waiting");
        failure.set(new IllegalStateException("the pool broke"));
        host.submit(() -> completeAsHost(worker, "f-0")).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> report.get(WAIT_MS, TimeUnit.MILLISECONDS)).cause()
                .isInstanceOf(WorkerSourceFailedException.class)
                .hasMessageContaining("the pool broke")
                .satisfies(e -> assertThat(Arrays.stream(e.getStackTrace()).map(StackTraceElement::getMethodName))
                        .as("thrown in the host's turn").contains("tryHostedTurn"));
        assertThat(worker.dispatchedOn).doesNotContainKey("f-1");
    }

    /** Completes a job's future inside a host's batch, as a selector pass in direct mode does. */
    private static void completeAsHost(HostedWorker worker, String id) {
        HandOffBatch batch = HandOffBatch.openHost();
        try {
            worker.replies.get(id).complete(TestJobs.echo(worker.jobs.get(id)));
        } finally {
            batch.close();
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() < deadline).as("waiting for " + what).isTrue();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }
}

package dev.panoptes.control.schedule;

import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSet;
import dev.panoptes.control.store.InMemoryResultStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a worker is offered, stepped by hand: never more jobs than its free slots (its capacity,
 * less the jobs it runs and the cancelled ones it has not let go of), every free slot filled in
 * one pass, and a retry sent to a worker other than the one that failed it.
 */
class WorkerSlotsTest {
    /**
     * A worker that answers when the test says, and that, like a remote worker, refuses to be
     * offered more than its free slots: each such offer is recorded as a violation. A cancelled
     * job keeps its slot until {@link #letGo()}.
     */
    private static final class SlotWorker implements WorkerHandle {
        final String id;
        final int capacity;
        final List<Job> offered = new ArrayList<>();
        final List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
        final List<String> violations = new ArrayList<>();
        private int running;
        private int held;

        SlotWorker(String id, int capacity) {
            this.id = id;
            this.capacity = capacity;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public int capacity() {
            return capacity;
        }

        @Override
        public synchronized int unavailableSlots() {
            return held;
        }

        @Override
        public synchronized CompletableFuture<JobOutcome> dispatch(Job job) {
            if (running + held >= capacity) {
                violations.add("worker " + id + " of capacity " + capacity + " was offered " + job.id().value()
                        + " while " + running + " jobs ran and " + held + " cancelled ones held slots");
            }
            running++;
            offered.add(job);
            CompletableFuture<JobOutcome> reply = new CompletableFuture<>();
            reply.whenComplete((o, e) -> {
                synchronized (SlotWorker.this) {
                    running--;
                    if (reply.isCancelled()) {
                        held++;
                    }
                }
            });
            replies.add(reply);
            return reply;
        }

        /** The worker ends the cancelled jobs it still ran: their slots are free. */
        synchronized void letGo() {
            held = 0;
        }

        synchronized int inUse() {
            return running + held;
        }

        List<CompletableFuture<JobOutcome>> pending() {
            return replies.stream().filter(r -> !r.isDone()).toList();
        }
    }

    private long nowMs = 10_000;

    private SteppedRun start(SchedulerOptions options, List<Job> jobs, WorkerHandle... workers) {
        WorkerSet set = new WorkerSet();
        for (WorkerHandle w : workers) {
            set.add(w);
        }
        return new Scheduler(set, new InMemoryResultStore(), options.withSkipCompleted(false))
                .start(jobs, () -> TimeUnit.MILLISECONDS.toNanos(nowMs));
    }

    @Test
    void aWorkerIsOfferedNoMoreJobsThanItsFreeSlotsAndEveryFreeSlotIsFilledInOnePass() {
        // Capacities that round-robin alone would not respect: a, b, a, then a again.
        SlotWorker a = new SlotWorker("a", 3);
        SlotWorker b = new SlotWorker("b", 1);
        List<Job> jobs = TestJobs.jobs("j", 12);
        SchedulerOptions options = SchedulerOptions.defaults().withJobTimeout(Duration.ofMillis(1_000))
                .withQuarantine(100, Duration.ofMinutes(1), Duration.ofMinutes(1));
        SteppedRun run = start(options, jobs, a, b);

        assertThat(run.step()).isTrue();
        assertThat(a.offered).as("the first pass fills every slot of a").hasSize(3);
        assertThat(b.offered).as("the first pass fills every slot of b").hasSize(1);

        // One of a's jobs answers: a has one free slot, b none.
        nowMs += 500;
        a.replies.get(0).complete(TestJobs.echo(a.offered.get(0)));
        assertThat(run.step()).isTrue();
        assertThat(a.offered).as("a, running 2 of 3, is offered one job").hasSize(4);
        assertThat(b.offered).hasSize(1);

        // The first three attempts still out pass their deadline: cancelled, but a and b keep
        // running them, so a (one job running, two held) and b (one held) have no free slot.
        nowMs += 500;
        assertThat(run.step()).isTrue();
        assertThat(a.inUse()).isEqualTo(3);
        assertThat(b.inUse()).isEqualTo(1);
        assertThat(a.offered).as("a holds its cancelled jobs' slots").hasSize(4);
        assertThat(b.offered).as("b holds its cancelled job's slot").hasSize(1);

        // Both let go of their cancelled jobs: their three free slots are filled at the next step.
        a.letGo();
        b.letGo();
        assertThat(run.step()).isTrue();
        assertThat(a.offered).hasSize(6);
        assertThat(b.offered).hasSize(2);

        // Then to the end, answering everything and letting go at each step.
        int steps = 0;
        boolean going = true;
        while (going) {
            assertThat(++steps).as("the run ends").isLessThan(100);
            for (SlotWorker w : List.of(a, b)) {
                w.letGo();
                for (CompletableFuture<JobOutcome> r : w.pending()) {
                    r.complete(TestJobs.echo(w.offered.get(w.replies.indexOf(r))));
                }
            }
            going = run.step();
            if (going) {
                assertThat(a.inUse() + b.inUse()).as("every slot filled while jobs remain (%d outstanding)",
                        run.outstanding()).isEqualTo(Math.min(4, run.outstanding()));
            }
        }
        assertThat(run.finish().completed()).isEqualTo(12);
        assertThat(a.violations).isEmpty();
        assertThat(b.violations).isEmpty();
    }

    @Test
    void aRefusedDispatchIsSentToAnotherWorkerThanTheOneThatRefusedIt() {
        retryGoesToTheOtherWorker(new DispatchRefusedException("worker a is closing"));
    }

    @Test
    void aWorkerScopedFailureIsRetriedOnAnotherWorkerThanTheOneAtFault() {
        retryGoesToTheOtherWorker(new WorkerFaultException("worker a's model API key was refused"));
    }

    /**
     * a fails j-0 with {@code failure} while b runs j-1: j-0 waits for b rather than going back
     * to a, free as a is.
     */
    private void retryGoesToTheOtherWorker(Exception failure) {
        SlotWorker a = new SlotWorker("a", 1);
        SlotWorker b = new SlotWorker("b", 1);
        List<Job> jobs = TestJobs.jobs("j", 2);
        SteppedRun run = start(SchedulerOptions.defaults(), jobs, a, b);

        assertThat(run.step()).isTrue();
        assertThat(a.offered).extracting(j -> j.id().value()).containsExactly("j-0");
        assertThat(b.offered).extracting(j -> j.id().value()).containsExactly("j-1");

        a.replies.get(0).completeExceptionally(failure);
        assertThat(run.step()).isTrue();
        assertThat(a.offered).as("j-0 is not sent back to the worker that failed it while b may take it")
                .hasSize(1);

        b.replies.get(0).complete(TestJobs.echo(jobs.get(1)));
        assertThat(run.step()).isTrue();
        assertThat(b.offered).extracting(j -> j.id().value()).containsExactly("j-1", "j-0");
        b.replies.get(1).complete(TestJobs.echo(jobs.get(0)));
        assertThat(run.step()).isFalse();
        assertThat(run.finish().completed()).isEqualTo(2);
    }

    @Test
    void aJobScopedFailureClearsItsWorkersStrikesInARow() {
        SlotWorker a = new SlotWorker("a", 1);
        List<String> quarantines = new ArrayList<>();
        SchedulerOptions options = SchedulerOptions.defaults()
                .withQuarantine(3, Duration.ofMinutes(1), Duration.ofMinutes(1))
                .withMaxWorkerFaults(10)
                .withListener(new ProgressListener() {
                    @Override
                    public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration d) {
                        quarantines.add(worker.id() + " after " + failuresInARow + ": " + reason);
                    }
                });
        SteppedRun run = start(options, TestJobs.jobs("j", 2), a);

        // Two strikes, then a failure that is the job's (the worker's model API answered).
        answerLast(run, a, new WorkerFaultException("strike 1"));
        answerLast(run, a, new WorkerFaultException("strike 2"));
        answerLast(run, a, new JobFailedException("model API answered 400: prompt too long"));
        // Two strikes again: under the limit of 3 counted from the job-scoped failure.
        answerLast(run, a, new WorkerFaultException("strike 1 again"));
        answerLast(run, a, new WorkerFaultException("strike 2 again"));
        assertThat(quarantines).as("strikes before a job-scoped failure do not count towards quarantine")
                .isEmpty();
        answerLast(run, a, new WorkerFaultException("strike 3 again"));
        assertThat(quarantines).containsExactly("a after 3: strike 3 again");
    }

    /** Fails the worker's last job with {@code failure}, then steps the run. */
    private static void answerLast(SteppedRun run, SlotWorker worker, Exception failure) {
        if (worker.offered.isEmpty()) {
            run.step();
        }
        assertThat(worker.pending()).hasSize(1);
        worker.pending().get(0).completeExceptionally(failure);
        run.step();
    }
}

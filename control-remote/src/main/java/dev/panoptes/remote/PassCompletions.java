package dev.panoptes.remote;

import dev.panoptes.control.HandOffBatch;

import dev.panoptes.control.JobOutcome;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The dispatch futures one pass of a {@link SelectorLoop} decided, and where they are completed.
 * The selector thread only decides (an answer read, a job failed, a connection closed); it
 * completes nothing while an actor is in the middle of its work, so no callback runs while a
 * job table is being walked.
 *
 * <p><b>Two modes.</b> By default the pass's completions go to the server's completion executor
 * as one task, so callbacks never run on the selector thread and a slow one never delays I/O.
 * With {@link ServerOptions#directCompletions()} (the coordinator command and the scheduling
 * benchmark run so) they are completed on the selector thread itself, callbacks included: right
 * after the pass's reads, so that a callback that dispatches the next job has it assigned and
 * written in the same pass, and again at the end of the pass. The caller then promised callbacks
 * that never block; one that does stalls every connection of that thread. The completions run in
 * a {@linkplain HandOffBatch#openHost() host's batch}: the scheduler, when its run's turn is free,
 * decides on this thread (see {@code SchedulerRun}), and the jobs it dispatches then are written
 * at the end of this pass, without waking anyone.
 *
 * <p><b>Threads.</b> Not thread-safe: the loop's owner thread only.
 */
final class PassCompletions {
    private final Executor executor;
    private final boolean direct;
    /**
     * The futures to complete and, at the same index, what with: a {@link JobOutcome} or the
     * {@link Throwable} to fail it with. Two lists rather than a pair object per answer.
     */
    private Batch batch = new Batch(16);

    /** A pass's completions: futures and their results, index by index. */
    private static final class Batch {
        final List<CompletableFuture<JobOutcome>> futures;
        final List<Object> results;

        Batch(int capacity) {
            futures = new ArrayList<>(capacity);
            results = new ArrayList<>(capacity);
        }

        boolean isEmpty() {
            return futures.isEmpty();
        }

        int size() {
            return futures.size();
        }

        void add(CompletableFuture<JobOutcome> future, Object result) {
            futures.add(future);
            results.add(result);
        }

        void clear() {
            futures.clear();
            results.clear();
        }
    }

    /**
     * Direct mode: the batch completed last, emptied, to take the current one's place at the
     * next completion. Two batches that keep their grown arrays, instead of a new one each time
     * sized by the last (a pass's reads often complete thousands, its end a few, and the lists
     * regrew from there: measured at a tenth of the selector thread's CPU). Null while in use.
     */
    private Batch spare = new Batch(16);

    /**
     * @param executor where completions run in the default mode; must not run them inline
     * @param direct   whether to complete on the selector thread instead
     */
    PassCompletions(Executor executor, boolean direct) {
        this.executor = executor;
        this.direct = direct;
    }

    /** Completes a future with an outcome once the pass hands its completions over. */
    void complete(CompletableFuture<JobOutcome> future, JobOutcome outcome) {
        batch.add(future, outcome);
    }

    /** Fails a future once the pass hands its completions over. */
    void fail(CompletableFuture<JobOutcome> future, Throwable failure) {
        batch.add(future, failure);
    }

    /** In direct mode, completes here and now what the pass decided so far; otherwise does nothing. */
    void completeIfDirect() {
        if (direct && !batch.isEmpty()) {
            completeHere();
        }
    }

    /** Direct mode: completes the current batch on this thread, another one collecting what its callbacks add. */
    private void completeHere() {
        Batch taken = batch;
        batch = spare != null ? spare : new Batch(Math.max(16, taken.size()));
        spare = null;
        try {
            completeAll(taken, true);
        } finally {
            // One huge pass (a mass failure) does not pin its arrays.
            spare = taken.size() > 65_536 ? new Batch(16) : taken;
            taken.clear();
        }
    }

    /**
     * Hands the pass's completions over: to the executor, or in direct mode to this thread while
     * the loop is not stopping. A loop stopping after the server's executor shut down completes
     * them here, which is better than leaving a future hanging.
     */
    void handOver(boolean stopping) {
        if (batch.isEmpty()) {
            return;
        }
        if (direct && !stopping) {
            completeHere();
            return;
        }
        Batch taken = take();
        try {
            executor.execute(() -> completeAll(taken, false));
        } catch (RejectedExecutionException e) {
            // Only after the server's executor is shut down, when this loop is the last one
            // still failing work: completing here is better than leaving a future hanging.
            completeAll(taken, false);
        }
    }

    /** Takes the batch away for the executor, leaving a new one sized like it. */
    private Batch take() {
        Batch taken = batch;
        batch = new Batch(Math.max(16, taken.size()));
        return taken;
    }

    /**
     * Completes the futures inside one {@link HandOffBatch} that holds items only: what their
     * callbacks send to one receiver (the scheduler's events) reaches it together, with one
     * wake-up for the whole batch. A callback that dispatches the next job still wakes its
     * selector at once (measured: holding those wakes to the end of the batch cost the dispatch
     * benchmark throughput at K=256, the selector idling while the completion thread finished).
     *
     * <p>On the selector thread in direct mode the batch is a {@linkplain HandOffBatch#openHost()
     * host's}: a receiver may do its work here (the scheduler takes its turn and decides on this
     * thread when no other thread holds the run), and the dispatches it makes are queued for this
     * same pass, written at its end without a wake-up.
     *
     * @param host true on the selector thread in direct mode, never on a completion thread or a
     *             stopping loop
     */
    private static void completeAll(Batch taken, boolean host) {
        HandOffBatch batch = host ? HandOffBatch.openHost() : HandOffBatch.openForItems();
        try {
            for (int i = 0; i < taken.size(); i++) {
                Object result = taken.results.get(i);
                if (result instanceof Throwable failure) {
                    taken.futures.get(i).completeExceptionally(failure);
                } else {
                    taken.futures.get(i).complete((JobOutcome) result);
                }
            }
        } finally {
            batch.close();
        }
    }
}

package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;

import java.net.SocketAddress;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A worker connected over the network, as the scheduler sees it: a {@link WorkerHandle} like
 * any local one. Made by the {@link WorkerServer} when a connection registers; it lives as long
 * as that connection.
 *
 * <p>Thread-safe: any thread may call any method. {@link #dispatch} only queues the job for the
 * connection's selector thread, which owns the socket (see {@link ConnectionActor}).
 */
public final class RemoteWorker implements WorkerHandle {
    private final ConnectionActor actor;
    private final String id;
    private final int capacity;
    private final Map<String, String> labels;
    private final Set<String> models;
    /** 429s reported by the worker that the server's listener has not been told of yet. */
    final java.util.concurrent.atomic.AtomicLong throttledUntold = new java.util.concurrent.atomic.AtomicLong();

    RemoteWorker(ConnectionActor actor, String id, int capacity, Map<String, String> labels, List<String> models) {
        this.actor = actor;
        this.id = id;
        this.capacity = capacity;
        this.labels = Map.copyOf(labels);
        this.models = Collections.unmodifiableSet(new LinkedHashSet<>(models));
    }

    /** The connection behind this worker (tests). */
    ConnectionActor actor() {
        return actor;
    }

    /** The models the worker said at registration that its API serves; empty when it did not say. */
    @Override
    public Set<String> models() {
        return models;
    }

    /** The id the worker registered with; two connections may share one. */
    @Override
    public String id() {
        return id;
    }

    /** The capacity the worker asked for, clamped to [1, {@link ServerOptions#maxCapacity()}]. */
    @Override
    public int capacity() {
        return capacity;
    }

    /**
     * Encodes the job's {@code assign} frame on the calling thread, queues it for this worker
     * and returns its future at once, unless the connection's dispatch queue
     * ({@link ServerOptions#dispatchQueueCapacity()}) is full: then it blocks until the worker's
     * answers make room. That is the backpressure a scheduler feels.
     *
     * <p>The future completes, on one of the server's completion threads (or, with
     * {@link ServerOptions#directCompletions()}, on the selector thread that read the answer), with
     * the worker's outcome (checked to answer exactly this job), or fails with:
     * <ul>
     *   <li>a {@link dev.panoptes.control.DispatchRefusedException} (retryable; the job never
     *       reached the worker) when the connection is gone or goes before the job is sent, the
     *       worker is draining, or the caller is interrupted while waiting for room (its
     *       interrupt flag is restored);</li>
     *   <li>a retryable {@link dev.panoptes.control.WorkerException} when the connection goes
     *       after the job was sent (message "worker connection lost: ..."), the worker said
     *       {@code failed} with scope {@code transient}, or its result does not answer the job;</li>
     *   <li>a {@link dev.panoptes.control.WorkerFaultException} (retryable, elsewhere) when the
     *       worker said {@code failed} with scope {@code worker};</li>
     *   <li>a {@link dev.panoptes.control.JobFailedException} when the worker said {@code failed}
     *       with scope {@code job}, the job cannot be encoded (the message names the vignette and
     *       field) or its frame exceeds the frame limit, or the same job id is already pending
     *       on this connection (that second dispatch fails; the first goes on).</li>
     * </ul>
     * Cancelling the future sends the worker a {@code cancel} for the job; its slot counts in
     * {@link #unavailableSlots()} until the worker answers it, and a worker that does not within
     * the heartbeat timeout is disconnected. A future that is already failed when returned
     * completes dependent actions on the caller's thread. Callbacks should not block: a blocked
     * callback holds one completion thread, though never the I/O of any worker; with direct
     * completions it holds the selector thread, and with it every worker on that thread. Called
     * on a selector thread (a scheduler deciding there), this never blocks: a full dispatch
     * queue fails the future with a {@link dev.panoptes.control.DispatchRefusedException}.
     *
     * @throws NullPointerException when job is null
     */
    @Override
    public CompletableFuture<JobOutcome> dispatch(Job job) {
        Objects.requireNonNull(job, "job");
        return actor.enqueue(job);
    }

    /** Jobs cancelled by the coordinator that the worker has not answered yet. A moment's view. */
    @Override
    public int unavailableSlots() {
        return actor.unavailableSlots();
    }

    /** The worker's address as seen from the coordinator. */
    public SocketAddress remoteAddress() {
        return actor.remoteAddress();
    }

    /**
     * The model API the worker calls, as it said at registration (its {@code endpoint} label),
     * or null.
     */
    @Override
    public String endpoint() {
        return labels.get("endpoint");
    }

    /** The labels the worker registered with; informational; never null. */
    public Map<String, String> labels() {
        return labels;
    }

    /** True until the connection ends; a draining worker is still open. */
    public boolean isOpen() {
        return actor.isOpen();
    }

    /** True once the worker announced {@code drain}: it is out of the pool and takes no new jobs. */
    public boolean isDraining() {
        return actor.isDraining();
    }

    /** Jobs assigned to the worker and not yet answered: at most {@link #capacity()}. A moment's view. */
    public int pendingCount() {
        return actor.pendingCount();
    }

    /** Dispatches waiting for a free slot of the worker. A moment's view. */
    public int queuedCount() {
        return actor.queuedCount();
    }

    @Override
    public String toString() {
        return "RemoteWorker[" + id + " at " + actor.remoteAddress() + ", capacity=" + capacity
                + (models.isEmpty() ? "" : ", models=" + models)
                + (actor.isOpen() ? "" : ", closed") + "]";
    }

    /**
     * How long since the worker last sent anything (a heartbeat, an answer), as its selector
     * thread measures it; waits up to {@code timeout} for that thread to answer. Any thread; for
     * status views, not for the scheduler.
     *
     * @return the silence in milliseconds, or -1 when the connection is closed or its thread
     *         did not answer within {@code timeout}
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    public long silentMs(java.time.Duration timeout) throws InterruptedException {
        if (!actor.isOpen()) {
            return -1;
        }
        try {
            return actor.silentMs().get(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return -1;
        }
    }
}

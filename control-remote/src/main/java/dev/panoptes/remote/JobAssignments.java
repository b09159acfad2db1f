package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.DispatchRefusedException;
import dev.panoptes.control.HandOffBatch;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Usage;
import dev.panoptes.control.wire.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The job traffic of one connection: dispatches coming in from callers, {@code assign} frames
 * going out while the worker has a free slot, answers matched to their jobs by id in whatever
 * order they come, cancels, the worker's drain, and the failing of every job when the connection
 * ends. The jobs themselves and the capacity rule over them are in {@link PendingJobs}, made when
 * the worker registers.
 *
 * <p><b>Threads.</b> {@link #enqueue} and {@link #onCancelRequested} are the front door for any
 * thread: they encode, queue, and signal or post to the connection's selector thread, and the
 * counts and {@link #isDraining()} are volatile views. Everything else runs on that selector
 * thread only, called by the {@link ConnectionActor}.
 *
 * <p><b>Promises.</b> At most {@code capacity} assigns are ever unanswered: queued dispatches are
 * drained only while a slot is free, which also bounds the outgoing buffer. Every future ends
 * exactly once, decided by its {@link DispatchFuture} claim: a cancel that won ends it on the
 * cancelling thread; otherwise the selector thread settles it and completes it through
 * {@link SelectorLoop#complete} / {@link SelectorLoop#fail} (on the completion executor, or with
 * {@link ServerOptions#directCompletions()} on the selector thread itself), or, for a dispatch
 * that never reached the table or raced the close, the caller's own thread fails it. When the
 * connection ends, every pending future fails with a retryable
 * {@link dev.panoptes.control.WorkerException} and every queued one as never sent.
 */
final class JobAssignments {
    private static final Logger log = LoggerFactory.getLogger(JobAssignments.class);

    private final ConnectionActor owner;
    private final SelectorLoop loop;
    private final ServerContext context;
    private final JobFailures failures;
    private final ConnectionTransport transport;
    private final Liveness liveness;
    /** True while the loop has the actor on its ready list and will call {@link #drainQueue}. */
    private final AtomicBoolean signalled = new AtomicBoolean();
    /** Set at registration, before the worker is published; null during the handshake. */
    private volatile PendingJobs jobs;
    private volatile boolean draining;

    // ---- selector thread only
    private final PendingJobs.Assigner assigner = new PendingJobs.Assigner() {
        @Override
        public void assign(Dispatch d) {
            transport.send(d.takeFrame());
            liveness.sent(loop.nowMs());
            if (log.isDebugEnabled()) {
                log.debug("worker={} job={} - assigned ({} pending)", workerId(), d.job().id(), jobs.pendingCount() + 1);
            }
        }

        @Override
        public void refuse(Dispatch d, PendingJobs.Refusal why) {
            loop.fail(d.reply(), failures.refused(d.job().id(), why, jobs.pendingCount()));
        }

        @Override
        public void cancelled(Dispatch d) {
            sendCancel(d, loop.nowMs());
        }
    };

    JobAssignments(ConnectionActor owner, SelectorLoop loop, ServerContext context, JobFailures failures,
                   ConnectionTransport transport, Liveness liveness) {
        this.owner = owner;
        this.loop = loop;
        this.context = context;
        this.failures = failures;
        this.transport = transport;
        this.liveness = liveness;
    }

    // ------------------------------------------------------------------ any thread

    /**
     * The front door of {@link RemoteWorker#dispatch}: encodes the job, then queues it for the
     * selector thread, blocking while the queue is full.
     *
     * <p>The future fails with a {@link JobFailedException} when the job cannot be encoded or is
     * over the frame limit, and with a {@link DispatchRefusedException} (retryable, and the job
     * never reached the worker) when the connection is gone or draining, goes while the caller
     * waits, or the caller is interrupted while waiting (its interrupt flag is then restored). A
     * dispatch racing a close is always failed, by the closer or by this method: after putting,
     * it re-reads the close flag that the closer sets <em>before</em> taking the queue, so one of
     * the two sees the other.
     */
    CompletableFuture<JobOutcome> enqueue(Job job) {
        Throwable closed = owner.closeCause();
        if (closed != null) {
            return CompletableFuture.failedFuture(failures.notSent(job.id(), "its connection is closed ("
                    + JobFailures.describe(closed) + ")"));
        }
        if (draining) {
            return CompletableFuture.failedFuture(failures.draining(job.id()));
        }
        byte[] frame;
        try {
            frame = context.encodeAssign(job, workerId());
        } catch (JobFailedException e) {
            return CompletableFuture.failedFuture(e);
        }
        PendingJobs table = jobs;
        DispatchFuture reply = new DispatchFuture(this, job.id());
        Dispatch dispatch = new Dispatch(job, frame, reply);
        if (SelectorLoop.onSelectorThread()) {
            // Called from a callback on a selector thread: waiting for room would stall every
            // connection of that thread, or wait for itself. Refuse instead.
            if (!table.offer(dispatch)) {
                reply.settle();
                reply.completeExceptionally(failures.notSent(job.id(), "its dispatch queue is full ("
                        + table.queuedCount() + " queued, " + table.pendingCount() + " pending) and dispatch was"
                        + " called on a selector thread, which must not block; dispatch from another thread"));
                return reply;
            }
        } else {
            try {
                if (!table.offer(dispatch)) {
                    // About to wait for the selector thread to make room: a wake-up this thread's
                    // batch holds back must go now, or the wait could be for a loop asleep.
                    HandOffBatch.flush();
                    table.put(dispatch);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reply.settle();
                reply.completeExceptionally(failures.notSent(job.id(), "the caller was interrupted while waiting"
                        + " for room in its dispatch queue (" + table.queuedCount() + " queued, "
                        + table.pendingCount() + " pending)"));
                return reply;
            }
        }
        if (owner.closeCause() != null) {
            failQueuedOnCallerThread();
        } else if (signalled.compareAndSet(false, true)) {
            loop.signal(owner);
        }
        return reply;
    }

    /** A caller cancelled a dispatch future; the selector thread tells the worker. Any thread. */
    void onCancelRequested(DispatchFuture future) {
        if (owner.isOpen()) {
            loop.execute(() -> onCancel(future));
        }
    }

    /** True once the worker sent {@code drain}. */
    boolean isDraining() {
        return draining;
    }

    /** The job table; non-null once registered. */
    PendingJobs jobs() {
        return jobs;
    }

    /** Jobs assigned on this connection and not yet answered; updated as they change. */
    int pendingCount() {
        PendingJobs table = jobs;
        return table == null ? 0 : table.pendingCount();
    }

    /** Dispatches waiting in the queue for a free slot. */
    int queuedCount() {
        PendingJobs table = jobs;
        return table == null ? 0 : table.queuedCount();
    }

    /** Slots held by cancelled jobs the worker has not answered yet. */
    int unavailableSlots() {
        PendingJobs table = jobs;
        return table == null ? 0 : table.unavailableSlots();
    }

    /** Clears the ready signal; called by the loop just before it drains the queue. */
    void clearSignal() {
        signalled.set(false);
    }

    private void failQueuedOnCallerThread() {
        Throwable cause = owner.closeCause();
        for (Dispatch d : jobs.takeQueued()) {
            d.reply().completeExceptionally(failures.notSent(d.job().id(), "its connection closed ("
                    + JobFailures.describe(cause) + ")"));
        }
    }

    private String workerId() {
        return failures.workerId();
    }

    // ------------------------------------------------------------------ selector thread only

    /** The worker registered: from now on dispatches have a table to go to. */
    void registered(PendingJobs table) {
        jobs = table;
    }

    /** Moves queued dispatches to the wire while the worker has free slots. */
    void drainQueue() {
        if (draining) {
            failQueuedWhileDraining();
            return;
        }
        jobs.drain(assigner, loop.nowMs());
    }

    /** A {@code result}: completes the job it answers, in whatever order answers come. */
    void onResult(JobOutcome outcome) {
        Dispatch d = answered(outcome.jobId(), "result", outcome);
        if (d == null) {
            return;
        }
        try {
            outcome.requireAnswers(d.job());
        } catch (IllegalArgumentException e) {
            log.warn("worker={} job={} - the worker's result does not answer the job: {}; failing it retryably",
                    workerId(), outcome.jobId(), e.getMessage());
            // Its records' calls were paid for, though none of them is stored.
            loop.fail(d.reply(), failures.wrongResult(d.job().id(), e).addSpent(outcome.spent()));
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - result received ({} pending)", workerId(), outcome.jobId(),
                    jobs.pendingCount());
        }
        loop.complete(d.reply(), outcome);
    }

    /** A {@code failed}: fails the job with the exception of its scope. */
    void onFailed(Message.Failed failed) {
        Dispatch d = answered(failed.jobId(), "failed frame", failed);
        if (d == null) {
            return;
        }
        ControlException error = failures.failedFrame(failed);
        if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - failed ({}): {}", workerId(), failed.jobId(),
                    failed.effectiveScope().wireName(), failed.error());
        }
        loop.fail(d.reply(), error);
    }

    /**
     * The pending dispatch an answer is for, or null (logged) when there is none. An answer to a
     * job the coordinator cancelled (its attempt timed out, say) is not used, but what its model
     * calls spent is reported ({@link ServerContext.Events#onLateSpent}): paid for all the same.
     *
     * @param answer the {@link JobOutcome} or {@link Message.Failed} that answers it
     */
    private Dispatch answered(JobId id, String what, Object answer) {
        Dispatch d = jobs.answered(id);
        if (d == null) {
            Dispatch cancelled = jobs.lastCancelledAnswered();
            if (cancelled != null) {
                log.debug("worker={} job={} - {} for a job the coordinator cancelled: its slot is free again",
                        workerId(), id, what);
                Usage spent = answer instanceof JobOutcome outcome ? outcome.spent()
                        : ((Message.Failed) answer).spent();
                if (spent != null && spent.totalTokens() > 0) {
                    context.events.onLateSpent(owner.worker(), cancelled.job(), spent);
                }
            } else {
                log.info("worker={} job={} - ignoring a {} for a job not outstanding on this connection"
                        + " (late or duplicate answer)", workerId(), id, what);
            }
        }
        return d;
    }

        private void onCancel(DispatchFuture future) {
        assert loop.isOwnerThread();
        if (!owner.isRegistered()) {
            return;
        }
        long now = loop.nowMs();
        Dispatch d = jobs.cancel(future, now);
        if (d == null) {
            // Still queued or parked (it never reached the worker), answered already, or acted on by a drain.
            return;
        }
        sendCancel(d, now);
    }

    /** Tells the worker to stop a job that moved to the cancelled jobs; it has a heartbeat timeout to let go. */
    private void sendCancel(Dispatch d, long now) {
        transport.send(context.encodeFrame(new Message.Cancel(d.job().id(), "its attempt was cancelled by the"
                + " coordinator (deadline passed)")));
        liveness.sent(now);
        loop.timerAt(owner, now + context.heartbeatTimeoutMs);
        log.info("worker={} job={} - cancelled; the worker has {} ms to let go of it", workerId(), d.job().id(),
                context.heartbeatTimeoutMs);
    }

    /** The worker sent {@code drain}: it leaves the pool, and nothing queued will reach it. */
    void onDrain(RemoteWorker worker) {
        if (draining) {
            return;
        }
        log.info("worker={} job=- - draining: no new jobs; waiting for its {} pending answers", workerId(),
                jobs.pendingCount());
        // Out of the pool before it refuses anything, so that a scheduler does not pick it again.
        try {
            context.events.onDraining(worker);
        } catch (RuntimeException e) {
            log.warn("worker={} job=- - the draining handler failed; carrying on", workerId(), e);
        }
        draining = true;
        failQueuedWhileDraining();
    }

    private void failQueuedWhileDraining() {
        for (Dispatch d : jobs.takeParked()) {
            loop.fail(d.reply(), failures.draining(d.job().id()));
        }
        for (Dispatch d : jobs.takeQueued()) {
            loop.fail(d.reply(), failures.draining(d.job().id()));
        }
    }

    /** The time by which the worker must answer its oldest cancelled job, or {@code Long.MAX_VALUE}. */
    long cancelDeadlineMs() {
        PendingJobs.Cancelled oldest = jobs.oldestCancelled();
        return oldest == null ? Long.MAX_VALUE : oldest.cancelledAtMs() + context.heartbeatTimeoutMs;
    }

    /** Why the connection must close now that its oldest cancelled job passed {@link #cancelDeadlineMs()}. */
    String cancelOverdue(long nowMs) {
        PendingJobs.Cancelled oldest = jobs.oldestCancelled();
        return "did not answer job " + oldest.dispatch().job().id() + " within " + (nowMs - oldest.cancelledAtMs())
                + " ms of the coordinator's cancel (" + jobs.cancelledCount() + " cancelled jobs unanswered);"
                + " it cannot be trusted with its slots";
    }

    /**
     * The connection ended: takes and clears the table, then fails each job retryably, one on the
     * wire as lost and one queued or parked as never sent. Logs one line with the counts.
     */
    void failAll(Throwable first, SocketAddress remote, long upMs) {
        // Take, clear, then fail: no failure runs while the table is being walked.
        List<Dispatch> inFlight = jobs.takeAssigned();
        List<Dispatch> queued = jobs.takeParked();
        queued.addAll(jobs.takeQueued());
        for (Dispatch d : inFlight) {
            loop.fail(d.reply(), failures.lost(d.job().id(), first));
        }
        for (Dispatch d : queued) {
            loop.fail(d.reply(), failures.notSent(d.job().id(), "its connection closed ("
                    + JobFailures.describe(first) + ")"));
        }
        log.info("worker={} job=- - connection from {} lost after {} ms; failed {} pending and {} queued jobs"
                + " retryably: {}", workerId(), remote, upMs, inFlight.size(), queued.size(),
                JobFailures.describe(first));
    }
}

package dev.panoptes.worker;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Plural;
import dev.panoptes.control.wire.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A session's jobs, from {@code assign} to answer: starts each through the {@link AsyncJobRunner}
 * (never blocking on it), holds it while it runs ({@link HeldJobs}), stops it on the
 * coordinator's {@code cancel}, and writes its answer ({@link AnswerMessages}) through the
 * transport once it finishes. It also counts the runner's 429s for the {@code throttled} report.
 *
 * <p><b>Threads.</b> The session's I/O thread calls everything, except the views
 * ({@link #heldCount()}, {@link #answeredCount()}, {@link #abandonedCount()}), which any thread
 * may read. Jobs finish on the runner's threads, which only hand their answer to
 * {@link FinishedJobs}; a job that finishes while it is being started is answered in the same
 * pass, with no hand-off at all.
 *
 * <p><b>Promises.</b> Every job held is answered exactly once, with {@code result} or
 * {@code failed}, unless the session ends first: then it is abandoned, its future cancelled and
 * its late answer never written. A runner that throws fails its job, never the session. An answer
 * too large for the frame limit fails its job instead of the connection.
 */
final class JobTraffic {
    private static final Logger log = LoggerFactory.getLogger(WorkerSession.class);

    private final String workerId;
    private final String coordinator;
    private final int capacity;
    private final AsyncJobRunner runner;
    private final SessionTransport transport;
    private final AnswerMessages messages;
    private final HeldJobs held = new HeldJobs();
    private final FinishedJobs finished;
    private final Consumer<FinishedJobs.Answer> writeAnswer = this::writeAnswer;
    private final AtomicLong answered = new AtomicLong();
    private final AtomicInteger abandoned = new AtomicInteger();
    /** I/O thread only: the runner's 429 count already reported to the coordinator. */
    private long throttlesReported;

    JobTraffic(String workerId, String coordinator, int capacity, AsyncJobRunner runner, SessionTransport transport) {
        this.workerId = workerId;
        this.coordinator = coordinator;
        this.capacity = capacity;
        this.runner = runner;
        this.transport = transport;
        this.messages = new AnswerMessages(workerId);
        this.finished = new FinishedJobs(transport::wakeup);
        // 429s seen before this connection were the previous session's to report (or lost with it).
        this.throttlesReported = runner.throttledCount();
    }

    /** Names the I/O thread, whose own completions need no hand-off. */
    void bind(Thread ioThread) {
        finished.bind(ioThread);
    }

    /** Starts an assigned job, stamped with the time of the read that brought it. */
    void onAssign(Message.Assign assign, long receivedNanos) {
        JobId id = assign.job().id();
        // A coordinator that repeats an id it has outstanding gets both run and answered; it ignores one.
        HeldJob job = held.add(id, receivedNanos);
        if (held.ids() > capacity) {
            log.warn("worker={} job={} - coordinator {} now has {} outstanding on this connection, more than"
                    + " the capacity of {}; running it anyway", workerId, id, coordinator,
                    Plural.of(held.ids(), "job"), capacity);
        } else if (log.isDebugEnabled()) {
            log.debug("worker={} job={} - assigned ({} of {} slots busy)", workerId, id, held.ids(), capacity);
        }
        try {
            job.future = runner.start(assign.job()).toCompletableFuture();
        } catch (RuntimeException | Error e) {
            // One bad job never ends the session: a runner that throws is answered like a job
            // that failed in a way that may pass elsewhere.
            log.error("worker={} job={} - the job runner failed to start it", workerId, id, e);
            finished.onDone(job, null, e);
            return;
        }
        // Completes on the runner's thread, or right here (then it costs no hand-off at all).
        job.future.whenComplete((outcome, error) -> finished.onDone(job, outcome, error));
        if (finished.inlineCount() >= SessionTransport.ANSWERS_PER_WRITE) {
            collectAnswers();
        }
    }

    /**
     * The coordinator gave up on a job (its deadline passed): cancel it, so that the runner stops
     * and its slot frees. Its answer comes from the cancelled future, at once.
     */
    void onCancel(Message.Cancel cancel) {
        HeldJob job = held.get(cancel.jobId());
        if (job == null || job.future == null) {
            log.debug("worker={} job={} - cancel for a job not running here (answered already)", workerId,
                    cancel.jobId());
            return;
        }
        log.info("worker={} job={} - cancelled by coordinator {}: {}; stopping it", workerId, cancel.jobId(),
                coordinator, cancel.reason() == null ? "no reason given" : cancel.reason());
        job.cancelledByCoordinator = true;
        job.future.cancel(true);
    }

    /**
     * Moves every finished job's answer into the outbound buffer, writing every
     * {@link SessionTransport#ANSWERS_PER_WRITE} of them at once rather than all at the end of the pass.
     */
    void collectAnswers() {
        finished.takeAll(writeAnswer);
    }

    private void writeAnswer(FinishedJobs.Answer a) {
        HeldJob job = a.job();
        if (!held.release(job)) {
            return; // abandoned when the session closed
        }
        Message message = messages.answerFor(job, a.outcome(), a.error());
        int frameBytes = transport.encode(message);
        if (frameBytes > transport.sendLimit()) {
            message = messages.tooLarge(job, message, frameBytes, transport.sendLimit());
            transport.encode(message);
        }
        answered.incrementAndGet();
        messages.logAnswer(job, message);
        transport.queueEncoded();
    }

    /**
     * The {@code throttled} report of the 429s the model API answered since the last one, so that
     * the coordinator can govern the fleet's concurrency against the API (PROTOCOL.md, revision
     * 4); null when there are none. The caller sends it.
     */
    Message.Throttled newThrottles() {
        long seen = runner.throttledCount();
        if (seen <= throttlesReported) {
            return null;
        }
        Message.Throttled report = new Message.Throttled(seen - throttlesReported);
        throttlesReported = seen;
        return report;
    }

    /** True when answers wait to be collected. */
    boolean answersWaiting() {
        return !finished.isEmpty();
    }

    /** True when no job is held. */
    boolean idle() {
        return held.isEmpty();
    }

    /** How many ids are held, for log lines. */
    int heldIds() {
        return held.ids();
    }

    /**
     * Forgets every held job and any answer waiting, and cancels the futures of jobs still
     * running: the connection is ending. Counted in {@link #abandonedCount()}.
     *
     * @return the ids abandoned, one per job
     */
    List<JobId> abandonAll() {
        List<JobId> dropped = held.abandonAll();
        finished.clear();
        abandoned.addAndGet(dropped.size());
        return dropped;
    }

    /** How many jobs are assigned and not yet answered. Any thread. */
    int heldCount() {
        return held.count();
    }

    /** How many answers have been written. Any thread. */
    long answeredCount() {
        return answered.get();
    }

    /** How many jobs were abandoned when the connection ended. Any thread. */
    int abandonedCount() {
        return abandoned.get();
    }
}

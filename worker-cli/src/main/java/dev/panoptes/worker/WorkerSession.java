package dev.panoptes.worker;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection of a worker to its coordinator, from {@code register} to close, following
 * PROTOCOL.md's "Rules the worker keeps".
 *
 * <p><b>Threads.</b> The thread that calls {@link #serve()} is the only reader of the stream: it
 * registers, then reads frames until the connection ends. Jobs run on the session's own pool of
 * {@code capacity} threads; each job thread queues its answer the moment the job finishes, so
 * answers go out in completion order. A single scheduled thread sends {@code heartbeat} every
 * interval, whether or not jobs are running. {@link #drain(Duration)} and {@link #close()} may be
 * called from any thread.
 *
 * <p><b>Writing.</b> Every frame is written under {@code sendLock}: one writer at a time, and
 * nothing after {@code outputShut}. Answers go through an outbox that whoever holds the lock
 * empties in one write, so jobs finishing together cost one syscall (with 64 jobs in flight,
 * one write per job was this worker's bottleneck). A frame that cannot be written ends the
 * session.
 * Answers of jobs still running when the connection is lost are abandoned: they are never written
 * to a dead socket, and a new connection is a new session with its own stream.
 *
 * <p><b>Failures and cancels.</b> Every {@code failed} frame says whose failure it is
 * ({@code scope}: the job's, this worker's, or the moment's), from the runner's
 * {@link ControlException#scope()}. A {@code cancel} from the coordinator interrupts the job's
 * thread (or keeps a job not yet started from starting) and the job is answered with
 * {@code failed}, so that its slot frees on both sides.
 *
 * <p><b>Liveness.</b> The socket's read timeout is the heartbeat timeout: when nothing at all
 * arrives from the coordinator for that long, {@code serve()} ends with a
 * {@link SocketTimeoutException}.
 */
public final class WorkerSession implements Closeable {
    private static final Logger log = LoggerFactory.getLogger(WorkerSession.class);
    /** The longest a drained session waits for the coordinator to close its side. */
    private static final long MAX_LINGER_MS = 2000;

    private final MessageStream stream;
    private final String workerId;
    private final int capacity;
    private final JobRunner runner;
    private final WorkerOptions options;
    private final String coordinator;

    private final ExecutorService jobThreads;
    private final ScheduledExecutorService heartbeatThread;

    // Writers: job threads, the heartbeat thread, drain(). One at a time, none after outputShut.
    private final ReentrantLock sendLock = new ReentrantLock();
    /** Answers of finished jobs not yet written; whoever holds {@code sendLock} writes them all. */
    private final ConcurrentLinkedQueue<Answer> outbox = new ConcurrentLinkedQueue<>();
    private volatile boolean outputShut;

    // Jobs assigned and not yet answered, with a count in case a coordinator repeats an id.
    // Guarded by its own monitor, which drain() waits on.
    private final Map<JobId, Integer> held = new LinkedHashMap<>();
    /** Jobs assigned and not yet answered, by id, so that a cancel can find the thread running one. */
    private final ConcurrentHashMap<JobId, RunningJob> runningJobs = new ConcurrentHashMap<>();

    // Owned by the serving thread.
    private ScheduledFuture<?> heartbeatTask;
    private long heartbeatIntervalMs;
    private int readTimeoutMs;

    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean drainSent = new AtomicBoolean();
    private final CountDownLatch served = new CountDownLatch(1);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicInteger abandoned = new AtomicInteger();
    private volatile boolean registerSent;
    private volatile boolean closed;
    private volatile boolean accepted;

    /**
     * Prepares a session over a connected stream; nothing is sent until {@link #serve()}.
     *
     * @param stream   a stream over a connected socket; the session closes it
     * @param workerId a valid worker id (see {@link WorkerIds})
     * @param capacity how many jobs run at once, at least 1
     * @param runner   runs each assigned job; called on the session's job threads
     * @param options  the token and the heartbeat timings
     * @throws IllegalArgumentException when the id or the capacity is invalid
     */
    public WorkerSession(MessageStream stream, String workerId, int capacity, JobRunner runner,
                         WorkerOptions options) {
        this.stream = Objects.requireNonNull(stream, "stream");
        this.workerId = WorkerIds.requireValid(workerId);
        this.capacity = WorkerIds.requireCapacity(workerId, capacity);
        this.runner = Objects.requireNonNull(runner, "runner");
        this.options = Objects.requireNonNull(options, "options");
        this.coordinator = Workers.describe(stream.socket().getRemoteSocketAddress());
        this.jobThreads = Executors.newFixedThreadPool(capacity, DaemonThreads.named("worker-job"));
        this.heartbeatThread = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("worker-heartbeat"));
    }

    /**
     * Registers and serves {@code assign} frames until the connection ends. Call once, from the
     * thread that will own the reading side.
     *
     * @throws IOException                    when the connection fails, including when nothing
     *                                        arrives for the heartbeat timeout
     *                                        ({@link SocketTimeoutException})
     * @throws RegistrationRejectedException  when the coordinator answers {@code rejected}
     * @throws dev.panoptes.control.ProtocolException when the coordinator sends a malformed frame
     * @throws IllegalStateException          when called a second time
     */
    public void serve() throws IOException {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("session of worker " + workerId + " with " + coordinator
                    + " is already serving; a session serves once");
        }
        try {
            if (closed) {
                return;
            }
            readTimeoutMs = toIntMillis(options.heartbeatTimeout());
            stream.socket().setSoTimeout(readTimeoutMs);
            sendOrThrow(new Message.Register(workerId, capacity, Message.PROTOCOL_VERSION, options.token(),
                    options.labels()));
            registerSent = true;
            log.info("worker={} - connected to coordinator {}; registering with capacity {}",
                    workerId, coordinator, capacity);
            scheduleHeartbeats(options.heartbeatInterval().toMillis());
            readUntilEndOfStream();
        } catch (IOException | RuntimeException e) {
            Throwable cause = failure.get();
            if (cause == null && closed) {
                log.debug("worker={} - stopped reading from {}: the session was closed locally", workerId, coordinator);
                return;
            }
            failure.compareAndSet(null, e);
            throw rethrowable(failure.get());
        } finally {
            shutdown();
            served.countDown();
        }
    }

    /**
     * Ends the session gracefully: sends {@code drain}, waits until every job the session holds
     * has been answered (or until {@code grace} has passed), then half-closes the connection,
     * gives the coordinator a moment to close its side, and closes. Jobs still unanswered when
     * the grace period ends are abandoned; the coordinator fails them retryably. Any thread; a
     * second call sends no second {@code drain}. A session that has not sent {@code register}
     * yet is only closed, since {@code register} must be the first frame.
     *
     * @return true when every job the session held was answered before it closed
     * @throws InterruptedException when the calling thread is interrupted while waiting; the
     *                              session is closed all the same
     */
    public boolean drain(Duration grace) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + grace.toNanos();
        try {
            // register must be the first frame: a session that has not sent it yet just closes.
            if (drainSent.compareAndSet(false, true) && registerSent && !closed) {
                log.info("worker={} - draining: asked coordinator {} to assign nothing more; finishing the jobs it"
                        + " holds ({}) within {}ms", workerId, coordinator, heldCount(), grace.toMillis());
                send(new Message.Drain());
            }
            awaitNothingHeld(deadlineNanos);
            finishGracefully(deadlineNanos);
        } finally {
            close();
        }
        return abandoned.get() == 0 && failure.get() == null;
    }

    /**
     * Closes the connection at once; jobs still held are abandoned and their late answers are
     * never written. Idempotent; any thread. A {@link #serve()} in progress then returns
     * normally, unless the connection had already failed.
     */
    @Override
    public void close() {
        closed = true;
        shutdown();
    }

    /** The id this session registers with. */
    public String workerId() {
        return workerId;
    }

    /** The coordinator's address, as text for messages. */
    public String coordinator() {
        return coordinator;
    }

    /**
     * True once the coordinator sent anything other than {@code rejected}: a {@code registered},
     * a heartbeat or an assignment. The reconnect loop resets its backoff after such a session.
     */
    public boolean accepted() {
        return accepted;
    }

    /** How many answers ({@code result} or {@code failed}) this session has written. */
    public long answeredCount() {
        return answered.get();
    }

    /** How many jobs are assigned and not yet answered. Any thread. */
    public int heldCount() {
        synchronized (held) {
            int total = 0;
            for (int n : held.values()) {
                total += n;
            }
            return total;
        }
    }

    // ---- the serving thread ----

    private void readUntilEndOfStream() throws IOException {
        while (true) {
            Optional<Message> next = recv();
            if (next.isEmpty()) {
                onEndOfStream();
                return;
            }
            onMessage(next.get());
        }
    }

    private Optional<Message> recv() throws IOException {
        try {
            return stream.recv();
        } catch (SocketTimeoutException e) {
            SocketTimeoutException dead = new SocketTimeoutException("nothing received from coordinator "
                    + coordinator + " for " + readTimeoutMs + "ms (the heartbeat timeout); treating the"
                    + " connection as dead");
            dead.initCause(e);
            throw dead;
        }
    }

    private void onMessage(Message message) throws SocketException {
        if (message instanceof Message.Rejected rejected) {
            throw new RegistrationRejectedException(coordinator, workerId, rejected.reason(), rejected.retryable());
        }
        accepted = true;
        if (message instanceof Message.Assign assign) {
            onAssign(assign.job());
        } else if (message instanceof Message.Cancel cancel) {
            onCancel(cancel);
        } else if (message instanceof Message.Heartbeat) {
            log.trace("worker={} - heartbeat from coordinator {}", workerId, coordinator);
        } else if (message instanceof Message.Registered registered) {
            onRegistered(registered.heartbeatMs());
        } else {
            // PROTOCOL.md, slips: frames only a worker sends are ignored, not fatal.
            log.debug("worker={} - ignoring a '{}' frame from coordinator {}: only workers send it",
                    workerId, message.type(), coordinator);
        }
    }

    private void onRegistered(long coordinatorHeartbeatMs) throws SocketException {
        log.info("worker={} - registered with coordinator {} (its heartbeat interval: {}ms)",
                workerId, coordinator, coordinatorHeartbeatMs);
        if (coordinatorHeartbeatMs <= 0) {
            return;
        }
        // Keep liveness working with a coordinator tuned differently from us: beat at least as
        // often as it does, and wait at least three of its intervals before declaring it dead.
        if (coordinatorHeartbeatMs < heartbeatIntervalMs) {
            log.debug("worker={} - heartbeating every {}ms to match coordinator {}", workerId,
                    coordinatorHeartbeatMs, coordinator);
            scheduleHeartbeats(coordinatorHeartbeatMs);
        }
        long coordinatorTimeoutMs = Math.min(Integer.MAX_VALUE,
                coordinatorHeartbeatMs * WorkerOptions.HEARTBEAT_TIMEOUT_FACTOR);
        if (coordinatorTimeoutMs > readTimeoutMs) {
            readTimeoutMs = (int) coordinatorTimeoutMs;
            stream.socket().setSoTimeout(readTimeoutMs);
            log.debug("worker={} - waiting up to {}ms for frames from coordinator {}", workerId, readTimeoutMs,
                    coordinator);
        }
    }

    private void onAssign(Job job) {
        int holding = hold(job.id());
        RunningJob running = new RunningJob(job);
        runningJobs.put(job.id(), running);
        try {
            jobThreads.execute(() -> runAndAnswer(running));
        } catch (RejectedExecutionException e) {
            // The session is closing; the coordinator fails the job retryably with the others.
            log.debug("worker={} job={} - not started: the session is closing", workerId, job.id());
            runningJobs.remove(job.id(), running);
            release(job.id());
            return;
        }
        if (holding > capacity) {
            log.warn("worker={} job={} - coordinator {} now has {} jobs outstanding on this connection, more than"
                    + " the capacity of {}; queueing the job until a slot frees", workerId, job.id(), coordinator,
                    holding, capacity);
        } else {
            log.debug("worker={} job={} - assigned ({} of {} slots busy)", workerId, job.id(), holding, capacity);
        }
    }

    /**
     * The coordinator gave up on a job (its deadline passed): stop it, so that its slot frees.
     * A job not started yet is answered at once when its turn comes; a running one is
     * interrupted and answered as soon as its runner gives up.
     */
    private void onCancel(Message.Cancel cancel) {
        RunningJob running = runningJobs.get(cancel.jobId());
        if (running == null) {
            log.debug("worker={} job={} - cancel for a job not running here (answered already)", workerId,
                    cancel.jobId());
            return;
        }
        log.info("worker={} job={} - cancelled by coordinator {}: {}; stopping it", workerId, cancel.jobId(),
                coordinator, cancel.reason() == null ? "no reason given" : cancel.reason());
        running.cancel();
    }

    /** A job assigned to this session, and the thread running it, so that a cancel can reach it. */
    private static final class RunningJob {
        final Job job;
        /** Guarded by this. */
        private Thread thread;
        /** Guarded by this. */
        private boolean cancelled;

        RunningJob(Job job) {
            this.job = job;
        }

        /** @return false when the job was cancelled before it started: it must not run */
        synchronized boolean start() {
            if (cancelled) {
                return false;
            }
            thread = Thread.currentThread();
            return true;
        }

        synchronized void finish() {
            thread = null;
        }

        synchronized void cancel() {
            cancelled = true;
            if (thread != null) {
                thread.interrupt();
            }
        }

        synchronized boolean isCancelled() {
            return cancelled;
        }
    }

    private void onEndOfStream() {
        // The caller says why the session ended; shutdown() names any jobs this abandons.
        log.debug("worker={} - coordinator {} closed the connection{} ({} jobs held)", workerId, coordinator,
                drainSent.get() ? " after our drain" : "", heldCount());
    }

    private void scheduleHeartbeats(long intervalMs) {
        ScheduledFuture<?> previous = heartbeatTask;
        if (previous != null) {
            previous.cancel(false);
        }
        heartbeatIntervalMs = intervalMs;
        try {
            heartbeatTask = heartbeatThread.scheduleAtFixedRate(
                    () -> send(new Message.Heartbeat(workerId)), intervalMs, intervalMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Closed meanwhile; the reader is about to notice.
            log.debug("worker={} - not scheduling heartbeats: the session is closing", workerId);
        }
    }

    // ---- job threads ----

    private void runAndAnswer(RunningJob running) {
        Job job = running.job;
        long startNanos = System.nanoTime();
        Message answer;
        if (!running.start()) {
            answer = cancelledAnswer(job);
        } else {
            try {
                answer = answerFor(job, runner.run(job));
            } catch (InterruptedException e) {
                if (closed) {
                    log.debug("worker={} job={} - abandoned: the session closed while it ran", workerId, job.id());
                    runningJobs.remove(job.id(), running);
                    release(job.id());
                    return;
                }
                answer = running.isCancelled() ? cancelledAnswer(job)
                        : Message.Failed.of(job.id(), "job " + job.id() + " was interrupted on worker " + workerId,
                                FailureScope.TRANSIENT);
            } catch (ControlException e) {
                answer = Message.Failed.of(job.id(), messageOf(e), e.scope());
            } catch (RuntimeException | Error e) {
                // One bad job never ends the session: a bug in the runner is answered like any
                // other failure that may pass elsewhere.
                log.error("worker={} job={} - the job runner failed unexpectedly", workerId, job.id(), e);
                answer = Message.Failed.of(job.id(), "worker " + workerId + " failed on job " + job.id() + ": "
                        + messageOf(e), FailureScope.TRANSIENT);
            } finally {
                running.finish();
                // A cancel's interrupt is for that job only, not for the next one on this thread.
                Thread.interrupted();
            }
        }
        runningJobs.remove(job.id(), running);
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        if (answer instanceof Message.Failed failed) {
            log.warn("worker={} job={} - failed after {}ms ({}): {}", workerId, job.id(), elapsedMs,
                    describeScope(failed.effectiveScope()), failed.error());
        } else {
            log.debug("worker={} job={} - done in {}ms", workerId, job.id(), elapsedMs);
        }
        outbox.add(new Answer(job.id(), answer));
        flushOutbox();
    }

    /**
     * Writes every answer waiting in the outbox in one write, if no other thread holds the send
     * lock; otherwise that thread flushes them when it lets go ({@link #unlockSend()}). Answers
     * that finish together thus cost one syscall, not one each.
     */
    private void flushOutbox() {
        while (!outbox.isEmpty() && sendLock.tryLock()) {
            List<Answer> batch = new ArrayList<>();
            try {
                for (Answer a; (a = outbox.poll()) != null; ) {
                    // Released before the answer goes out: the coordinator may assign the next
                    // job the moment it reads this answer, and that job must find the slot free.
                    // drain()'s half-close takes the same lock, so it still waits for the bytes.
                    release(a.jobId());
                    batch.add(a);
                }
                if (sendAll(batch)) {
                    answered.addAndGet(batch.size());
                } else {
                    log.debug("worker={} - {} answers abandoned: the connection to {} is closed", workerId,
                            batch.size(), coordinator);
                }
            } finally {
                sendLock.unlock();
            }
        }
    }

    /** Lets go of the send lock, then writes any answer that queued up behind it. */
    private void unlockSend() {
        sendLock.unlock();
        if (!outbox.isEmpty()) {
            flushOutbox();
        }
    }

    /** A finished job's answer, waiting to be written. */
    private record Answer(JobId jobId, Message message) {
    }

    private Message cancelledAnswer(Job job) {
        return Message.Failed.of(job.id(), "job " + job.id() + " was stopped on worker " + workerId
                + ": the coordinator cancelled it", FailureScope.TRANSIENT);
    }

    private static String describeScope(FailureScope scope) {
        switch (scope) {
            case JOB:
                return "the job's own failure, not retryable";
            case WORKER:
                return "this worker's own failure: check its model API settings";
            default:
                return "retryable";
        }
    }

    private Message answerFor(Job job, JobOutcome outcome) {
        if (outcome == null) {
            return Message.Failed.of(job.id(), "the job runner of worker " + workerId + " returned no outcome for job "
                    + job.id(), FailureScope.TRANSIENT);
        }
        try {
            return new Message.Result(outcome.requireAnswers(job));
        } catch (IllegalArgumentException e) {
            return Message.Failed.of(job.id(), "worker " + workerId + " produced a wrong outcome: " + e.getMessage(),
                    FailureScope.TRANSIENT);
        }
    }

    private static String messageOf(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    // ---- any thread ----

    /** Writes one frame; false when the output is shut. A write failure ends the session. */
    private boolean send(Message message) {
        try {
            sendOrThrow(message);
            return true;
        } catch (IOException e) {
            if (!closed) {
                fail(new IOException("could not send '" + message.type() + "' to coordinator " + coordinator + ": "
                        + messageOf(e), e));
            }
            return false;
        }
    }

    /** Writes the answers in one write; false when the output is shut. A write failure ends the session. */
    private boolean sendAll(List<Answer> answers) {
        List<Message> messages = new ArrayList<>(answers.size());
        answers.forEach(a -> messages.add(a.message()));
        try {
            if (outputShut) {
                return false;
            }
            try {
                stream.sendAll(messages);
            } catch (ProtocolException tooLarge) {
                // One answer is over the frame limit: send the others, and a failure for that one.
                for (Answer a : answers) {
                    try {
                        stream.send(a.message());
                    } catch (ProtocolException e) {
                        stream.send(Message.Failed.of(a.jobId(), "the answer of worker " + workerId + " to job "
                                + a.jobId() + " cannot be sent: " + e.getMessage(), FailureScope.JOB));
                    }
                }
            }
            return true;
        } catch (IOException e) {
            if (!closed) {
                fail(new IOException("could not send " + messages.size() + " answers to coordinator " + coordinator
                        + ": " + messageOf(e), e));
            }
            return false;
        }
    }

    private void sendOrThrow(Message message) throws IOException {
        sendLock.lock();
        try {
            if (outputShut) {
                throw new SocketException("output to coordinator " + coordinator + " is shut");
            }
            stream.send(message);
        } finally {
            unlockSend();
        }
    }

    private void fail(Throwable cause) {
        if (failure.compareAndSet(null, cause)) {
            // Wakes the serving thread, which ends the session with this cause.
            closeStream();
        }
    }

    private int hold(JobId id) {
        synchronized (held) {
            held.merge(id, 1, Integer::sum);
            int total = 0;
            for (int n : held.values()) {
                total += n;
            }
            return total;
        }
    }

    private void release(JobId id) {
        synchronized (held) {
            held.computeIfPresent(id, (k, n) -> n == 1 ? null : n - 1);
            held.notifyAll();
        }
    }

    private void awaitNothingHeld(long deadlineNanos) throws InterruptedException {
        synchronized (held) {
            while (!held.isEmpty() && !closed) {
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
                if (remainingMs <= 0) {
                    return; // shutdown() names the jobs it abandons
                }
                held.wait(remainingMs);
            }
        }
    }

    /**
     * Stops heartbeats, half-closes so that the coordinator reads every answer before our end
     * of stream, and waits briefly for it to close its side (a full close with unread input
     * could reset the connection and lose the last answers).
     */
    private void finishGracefully(long deadlineNanos) throws InterruptedException {
        heartbeatThread.shutdownNow();
        long lingerMs = Math.max(100, Math.min(MAX_LINGER_MS, options.heartbeatInterval().toMillis()));
        long lockWaitMs = Math.max(lingerMs, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
        if (!sendLock.tryLock(lockWaitMs, TimeUnit.MILLISECONDS)) {
            log.warn("worker={} - a write to coordinator {} is stuck after {}ms; closing without a clean half-close",
                    workerId, coordinator, lockWaitMs);
            return;
        }
        try {
            outputShut = true;
            if (closed || stream.socket().isClosed()) {
                return;
            }
            stream.socket().shutdownOutput();
        } catch (IOException e) {
            log.debug("worker={} - half-close towards {} failed: {}", workerId, coordinator, e.toString());
            return;
        } finally {
            unlockSend();
        }
        if (started.get() && !served.await(lingerMs, TimeUnit.MILLISECONDS)) {
            log.debug("worker={} - coordinator {} did not close within {}ms of our drain; closing", workerId,
                    coordinator, lingerMs);
        }
    }

    /** Ends everything this session owns; idempotent, any thread. */
    private void shutdown() {
        closed = true;
        outputShut = true;
        // Take the unanswered jobs before interrupting their threads: an interrupted job
        // releases itself, and must still count as abandoned.
        List<JobId> dropped;
        synchronized (held) {
            dropped = new ArrayList<>(held.keySet());
            held.clear();
            held.notifyAll();
        }
        heartbeatThread.shutdownNow();
        jobThreads.shutdownNow();
        closeStream();
        if (!dropped.isEmpty()) {
            abandoned.addAndGet(dropped.size());
            log.warn("worker={} - {} with {} jobs unanswered {}; abandoning them (the coordinator fails them"
                    + " retryably and redelivers them)", workerId, drainSent.get()
                            ? "draining ended (grace period over or connection lost)"
                            : "connection to coordinator " + coordinator + " closed", dropped.size(), dropped);
        }
    }

    private void closeStream() {
        try {
            stream.close();
        } catch (IOException e) {
            log.debug("worker={} - closing the socket to {} failed: {}", workerId, coordinator, e.toString());
        }
    }

    private static int toIntMillis(Duration d) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, d.toMillis()));
    }

    private static IOException rethrowable(Throwable cause) {
        if (cause instanceof IOException io) {
            return io;
        }
        if (cause instanceof RuntimeException re) {
            throw re;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return new IOException(cause);
    }
}

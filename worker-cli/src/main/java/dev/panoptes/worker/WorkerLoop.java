package dev.panoptes.worker;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.PooledJobRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Keeps a worker connected: runs one {@link WorkerSession} after another, forever, with capped
 * exponential backoff and jitter between attempts. Workers are cattle; supervision is this loop.
 *
 * <p><b>Threads.</b> {@link #runForever()} runs on the caller's thread, which becomes the loop
 * thread and each session's reading thread. {@link #drain(Duration)} and {@link #close()} may be
 * called from any other thread (a shutdown hook, a test); they only flip {@code stopping} and
 * act on the live session or the socket being connected, both guarded by {@code lock}.
 *
 * <p>The backoff is reset after a session the coordinator accepted, so that a worker whose
 * coordinator restarts comes back quickly, while a worker that is refused or cannot connect
 * backs off to the cap. Every session's end is logged with its cause. A registration the
 * coordinator rejects for good (its {@code rejected} frame not retryable: a wrong token, an
 * unsupported protocol, an invalid id) ends the loop instead: reconnecting cannot help, only the
 * operator can, so {@link #runForever()} throws and leaves the telling to its caller. A
 * retryable rejection is logged as a warning and retried like a lost connection. A failed TLS
 * handshake ({@link TlsHandshakeException}: an unknown CA, another host name, an expired
 * certificate) is retried too, with the backoff, one warning per attempt: it is the operator's to
 * fix, but often on the coordinator's side (its certificate), and a worker that stayed up
 * connects as soon as it is fixed, where one that exited would need restarting.
 *
 * <p><b>Several coordinators.</b> Given several addresses (a primary and its standbys, see
 * {@code coordinator --standby}), the loop follows whichever holds the run: an attempt that fails
 * (refused, rejected for now, as a standby that does not hold the run rejects, or cut before
 * the coordinator accepted it) moves on to the next address after the first backoff pause, and
 * the backoff grows only once every address was tried in turn. A session the coordinator
 * accepted and that then ends is followed by an attempt at the same address first.
 */
public final class WorkerLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WorkerLoop.class);

    /** Where coordinators may listen, tried in turn; at least one. */
    private final List<InetSocketAddress> coordinators;
    /** The index in {@link #coordinators} of the next attempt; owned by the loop's thread. */
    private int at;
    private final String workerId;
    private final int capacity;
    private final AsyncJobRunner runner;
    /** The pool a blocking runner was wrapped in, closed when the loop ends; null for an async runner. */
    private final PooledJobRunner ownedPool;
    private final WorkerOptions options;
    private final Backoff backoff;

    private final Object lock = new Object();
    // Guarded by lock.
    private boolean stopping;
    private boolean running;
    private WorkerSession current;
    private SocketChannel connecting;

    /** Connections made, the first included; read by the metrics from any thread. */
    private final java.util.concurrent.atomic.AtomicLong connections = new java.util.concurrent.atomic.AtomicLong();

    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private final CountDownLatch finished = new CountDownLatch(1);

    /**
     * @param coordinator the coordinator's address; resolved again on every attempt, so that a
     *                    coordinator that moves to another IP under the same name is found
     * @param workerId    a valid worker id (see {@link WorkerIds})
     * @param capacity    jobs run at once, at least 1
     * @param runner      starts each job, on the session's I/O thread; shared by all sessions
     * @param options     token, heartbeat, connect timeout and backoff
     * @throws IllegalArgumentException when the id or capacity is invalid
     */
    public WorkerLoop(InetSocketAddress coordinator, String workerId, int capacity, AsyncJobRunner runner,
                      WorkerOptions options) {
        this(List.of(coordinator), workerId, capacity, Objects.requireNonNull(runner, "runner"), null, options);
    }

    /**
     * A loop that follows whichever of several coordinators holds the run (see the class comment).
     *
     * @param coordinators where they listen, tried in this order; at least one
     * @see #WorkerLoop(InetSocketAddress, String, int, AsyncJobRunner, WorkerOptions)
     * @throws IllegalArgumentException when the list is empty, or the id or capacity is invalid
     */
    public WorkerLoop(List<InetSocketAddress> coordinators, String workerId, int capacity, AsyncJobRunner runner,
                      WorkerOptions options) {
        this(coordinators, workerId, capacity, Objects.requireNonNull(runner, "runner"), null, options);
    }

    /**
     * A loop whose blocking runner runs on a pool of {@code capacity} threads
     * ({@link PooledJobRunner}), shared by all sessions and stopped when the loop ends.
     *
     * @see #WorkerLoop(InetSocketAddress, String, int, AsyncJobRunner, WorkerOptions)
     */
    public WorkerLoop(InetSocketAddress coordinator, String workerId, int capacity, JobRunner runner,
                      WorkerOptions options) {
        this(List.of(coordinator), workerId, capacity, null, new PooledJobRunner(
                Objects.requireNonNull(runner, "runner"), WorkerIds.requireCapacity(workerId, capacity), "worker-job"),
                options);
    }

    /**
     * A loop over several coordinators whose blocking runner runs on a pool of {@code capacity}
     * threads, as {@link #WorkerLoop(InetSocketAddress, String, int, JobRunner, WorkerOptions)}.
     *
     * @see #WorkerLoop(List, String, int, AsyncJobRunner, WorkerOptions)
     */
    public WorkerLoop(List<InetSocketAddress> coordinators, String workerId, int capacity, JobRunner runner,
                      WorkerOptions options) {
        this(coordinators, workerId, capacity, null, new PooledJobRunner(
                Objects.requireNonNull(runner, "runner"), WorkerIds.requireCapacity(workerId, capacity), "worker-job"),
                options);
    }

    private WorkerLoop(List<InetSocketAddress> coordinators, String workerId, int capacity, AsyncJobRunner runner,
                       PooledJobRunner pool, WorkerOptions options) {
        this.coordinators = List.copyOf(coordinators);
        if (this.coordinators.isEmpty()) {
            throw new IllegalArgumentException("worker " + workerId + " needs at least one coordinator address");
        }
        this.workerId = WorkerIds.requireValid(workerId);
        this.capacity = WorkerIds.requireCapacity(workerId, capacity);
        this.runner = pool != null ? pool : runner;
        this.ownedPool = pool;
        this.options = Objects.requireNonNull(options, "options");
        this.backoff = new Backoff(options.initialBackoff(), options.maxBackoff());
    }

    /**
     * Connects, serves, and reconnects after every disconnect until {@link #drain(Duration)} or
     * {@link #close()} is called; then returns. Call once; the calling thread becomes the loop's.
     *
     * @throws RegistrationRejectedException when the coordinator rejects the registration and
     *                                       says retrying cannot help; the loop has then
     *                                       stopped, having logged nothing about it, so that
     *                                       the caller reports the reason once
     * @throws CoordinatorSpeaksTlsException when this plaintext worker's coordinator speaks TLS;
     *                                       the loop has stopped without a word about it
     * @throws InterruptedException          when the calling thread is interrupted between
     *                                       sessions
     * @throws IllegalStateException         when the loop is already running
     */
    public void runForever() throws InterruptedException {
        synchronized (lock) {
            if (running) {
                throw new IllegalStateException("the loop of worker " + workerId + " is already running");
            }
            running = true;
        }
        try {
            while (!isStopping()) {
                WorkerSession session = null;
                InetSocketAddress coordinator = coordinators.get(at);
                String ending;
                boolean rejected = false;
                boolean cleanEnd = false;
                try {
                    session = connect(coordinator);
                    if (session == null) {
                        break;
                    }
                    connections.incrementAndGet();
                    session.serve();
                    ending = "coordinator " + session.coordinator() + " closed the connection";
                    cleanEnd = true;
                } catch (RegistrationRejectedException e) {
                    if (!e.retryable() && !isStopping()) {
                        log.debug("worker={} - registration rejected for good; stopping the loop", workerId, e);
                        throw e;
                    }
                    rejected = true;
                    ending = "coordinator " + Workers.describe(coordinator) + " rejected the registration for now: "
                            + e.reason();
                } catch (CoordinatorSpeaksTlsException e) {
                    if (!isStopping()) {
                        throw e;
                    }
                    ending = e.getMessage();
                } catch (IOException | RuntimeException e) {
                    ending = describe(e, session, coordinator);
                    log.debug("worker={} - session ended", workerId, e);
                } finally {
                    synchronized (lock) {
                        current = null;
                    }
                    if (session != null) {
                        session.close();
                    }
                }
                if (isStopping()) {
                    break;
                }
                boolean accepted = session != null && session.accepted();
                if (accepted) {
                    backoff.reset();
                } else {
                    at = (at + 1) % coordinators.size();
                }
                // Within a round of the addresses, the next one is tried after the first pause; the
                // backoff grows once all were tried (with one address, every attempt is a round).
                long delayMs = !accepted && at != 0 ? options.initialBackoff().toMillis() : backoff.next().toMillis();
                if (coordinators.size() > 1 && !accepted) {
                    ending += "; next: " + Workers.describe(coordinators.get(at));
                }
                if (cleanEnd) {
                    log.info("worker={} - {}; reconnecting in {}ms", workerId, ending, delayMs);
                } else if (rejected) {
                    // The coordinator's reason says what is wrong and what to do; nothing to add.
                    log.warn("worker={} - {}; retrying in {}ms", workerId, ending, delayMs);
                } else {
                    log.warn("worker={} - {}; reconnecting in {}ms", workerId, ending, delayMs);
                }
                if (stopSignal.await(delayMs, TimeUnit.MILLISECONDS)) {
                    break;
                }
            }
        } finally {
            if (ownedPool != null) {
                ownedPool.close();
            }
            finished.countDown();
        }
        log.info("worker={} - stopped", workerId);
    }

    /**
     * Stops reconnecting and ends the live session gracefully: {@code drain}, answer the jobs it
     * holds within {@code grace}, close. Then waits (briefly) for {@link #runForever()} to return.
     * Any thread.
     *
     * @return true when no job was abandoned
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    public boolean drain(Duration grace) throws InterruptedException {
        WorkerSession session = stop();
        boolean clean = session == null || session.drain(grace);
        awaitLoopEnd();
        return clean;
    }

    /**
     * Stops at once: closes the live session (its jobs are abandoned; the coordinator redelivers
     * them) and makes {@link #runForever()} return. Idempotent; any thread.
     */
    @Override
    public void close() {
        WorkerSession session = stop();
        if (session != null) {
            session.close();
        }
    }

    /** The first address this loop connects to. */
    public InetSocketAddress coordinator() {
        return coordinators.get(0);
    }

    /** Every address this loop connects to, in the order it tries them. */
    public List<InetSocketAddress> coordinators() {
        return coordinators;
    }

    /** The id this loop registers with. */
    public String workerId() {
        return workerId;
    }

    /** True while a session is live and the coordinator has accepted it. Any thread; a moment's view. */
    public boolean isConnected() {
        WorkerSession session;
        synchronized (lock) {
            session = current;
        }
        return session != null && session.accepted();
    }

    /** Connections made to the coordinator so far, the first included. Any thread. */
    public long connectionCount() {
        return connections.get();
    }

    private WorkerSession stop() {
        WorkerSession session;
        SocketChannel socket;
        synchronized (lock) {
            stopping = true;
            session = current;
            socket = connecting;
        }
        stopSignal.countDown();
        if (socket != null) {
            Workers.closeQuietly(socket);
        }
        return session;
    }

    private void awaitLoopEnd() throws InterruptedException {
        boolean wasRunning;
        synchronized (lock) {
            wasRunning = running;
        }
        if (wasRunning && !finished.await(options.connectTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
            log.warn("worker={} - the reconnect loop did not stop within {}ms of the drain", workerId,
                    options.connectTimeout().toMillis() + 1000);
        }
    }

    private boolean isStopping() {
        synchronized (lock) {
            return stopping;
        }
    }

    /** Connects and wraps the socket in a session; null when the loop is stopping. */
    private WorkerSession connect(InetSocketAddress coordinator) throws IOException {
        SocketChannel channel = SocketChannel.open();
        synchronized (lock) {
            if (stopping) {
                Workers.closeQuietly(channel);
                return null;
            }
            connecting = channel;
        }
        try {
            Workers.connect(channel, coordinator, options.connectTimeout());
            WorkerSession session = new WorkerSession(channel, workerId, capacity, runner, options);
            synchronized (lock) {
                if (stopping) {
                    session.close();
                    return null;
                }
                current = session;
            }
            return session;
        } catch (IOException | RuntimeException e) {
            Workers.closeQuietly(channel);
            throw e;
        } finally {
            synchronized (lock) {
                connecting = null;
            }
        }
    }

    private String describe(Exception e, WorkerSession session, InetSocketAddress coordinator) {
        String what = e.getMessage() == null ? e.toString() : e.getMessage();
        if (e instanceof TlsHandshakeException) {
            // Says the coordinator, the reason and what to check, in one line.
            return what;
        }
        if (session == null) {
            if (e instanceof UnknownHostException) {
                return "cannot resolve coordinator host '" + coordinator.getHostString() + "'";
            }
            return "cannot connect to coordinator " + Workers.describe(coordinator) + ": " + what;
        }
        return "session with coordinator " + session.coordinator() + " ended: " + what;
    }
}

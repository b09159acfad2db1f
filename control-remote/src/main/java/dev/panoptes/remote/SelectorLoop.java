package dev.panoptes.remote;

import dev.panoptes.control.Plural;
import dev.panoptes.control.HandOffBatch;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One selector thread and the connections pinned to it for their whole life: an event loop.
 * A server runs a small fixed number of these, however many workers connect.
 *
 * <p><b>Threads.</b> Other threads only enqueue (a channel to adopt, an actor with new
 * dispatches, a task, the stop flag) and {@link #wakeup()} the selector, and only when it may be
 * sleeping. Everything under "owner thread only" is touched by the loop's thread alone, and
 * so is every {@link ConnectionActor} it hosts, its {@link LoopTimers} and its
 * {@link PassCompletions}. A test may instead {@link #bindToCurrentThread()} and drive
 * {@link #doWork(long)} itself, with its own clock.
 *
 * <p><b>One pass</b> ({@link #doWork(long)}): run posted tasks, adopt new channels, collect ready
 * keys and act on them, hand queued dispatches to their actors, run due deadlines, flush every
 * connection that has bytes to send (so all frames of a pass leave in one write), and hand the
 * pass's future completions over. By default they go to the completion executor as one task, so
 * a callback never runs here and a slow one never delays I/O. With
 * {@link ServerOptions#directCompletions()} (as the coordinator command runs) the caller has
 * promised callbacks that never block, and the pass completes the futures on this thread, callbacks
 * included, right after reading, so that a callback that dispatches the next job has it written
 * in the same pass.
 *
 * <p>One bad connection closes that connection, whatever it throws (an {@link Error} too); the
 * loop goes on. An {@link Error} outside any one connection's handling ends the loop: every
 * connection it hosts is closed (its jobs fail retryably), channels still waiting to be adopted
 * are closed, and the loop's death handler is told, so that the server closes rather than keep
 * a port that nobody serves. Work queued for a dead loop is failed, never dropped.
 *
 * <p>Past 500 lines because the loop is one idea whose parts share its thread and its pass:
 * the cross-thread front door, the pass, the sleep with its lost-wakeup check, and the ordered
 * shutdown that fails rather than drops; timers and completions are in their own classes.
 */
final class SelectorLoop implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(SelectorLoop.class);
    static final int READ_BUFFER_BYTES = 64 * 1024;

    /** Handles readiness of a key that is not a connection (the server's accept key). */
    interface Acceptor {
        /** Called on the loop's thread when the server socket has connections to accept. */
        void onAcceptable();
    }

    /** The loop whose thread is running, on selector threads; null on every other thread. */
    private static final ThreadLocal<SelectorLoop> CURRENT = new ThreadLocal<>();

    private final String name;
    private final ServerContext context;
    private final Selector selector;
    private final LongSupplier clockMs;
    private final Consumer<Throwable> onDeath;

    // ---- any thread
    private final Queue<SocketChannel> adoptions = new ConcurrentLinkedQueue<>();
    private final Queue<ConnectionActor> ready = new ConcurrentLinkedQueue<>();
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** True while the loop is awake or a wakeup is already on its way: no need to wake it (again). */
    private final AtomicBoolean wakeupPending = new AtomicBoolean(true);
    /** {@link #wakeup()} as one object, so that a batch holding it back runs it once. */
    private final Runnable wake = this::wakeup;
    /**
     * {@link #closeBroken} as one object for {@link LoopTimers#runDue}: a method reference written
     * in the pass made a new object every pass (seen at half a percent of a busy selector thread).
     */
    private final BiConsumer<ConnectionActor, Throwable> onBroken = this::closeBroken;
    private volatile boolean stopping;
    private volatile Thread owner;

    // ---- owner thread only
    private final List<ConnectionActor> actors = new ArrayList<>();
    private final List<ConnectionActor> toFlush = new ArrayList<>();
    private final ByteBuffer readBuffer = ByteBuffer.allocate(READ_BUFFER_BYTES);
    /**
     * The keys the last select found ready, in the order the selector reported them. Selecting
     * with {@link #collectKey} instead of into the selector's selected-key set saves a
     * {@code HashSet} add, an iterator and a remove per ready key on every pass.
     */
    private final List<SelectionKey> readyKeys = new ArrayList<>();
    private final Consumer<SelectionKey> collectKey = readyKeys::add;
    private final LoopTimers timers;
    private final PassCompletions completions;
    private long nowMs;
    /** True when the last sleep's select filled the selected keys, so the next pass need not select again. */
    private boolean selectedBySleep;

    /**
     * A loop whose death goes unreported, for tests that drive it by hand.
     *
     * @see #SelectorLoop(String, ServerContext, Executor, LongSupplier, Consumer)
     */
    SelectorLoop(String name, ServerContext context, Executor completionExecutor, LongSupplier clockMs)
            throws IOException {
        this(name, context, completionExecutor, clockMs, cause -> { });
    }

    /**
     * @param name               the thread's name
     * @param completionExecutor where future completions run; must not run them inline
     * @param clockMs            a monotonic clock in milliseconds
     * @param onDeath            told, on the dying loop's thread after it has closed its
     *                           connections, why the loop ended when it did not end by {@link #stop()}
     * @throws IOException when the selector cannot be opened
     */
    SelectorLoop(String name, ServerContext context, Executor completionExecutor, LongSupplier clockMs,
                 Consumer<Throwable> onDeath) throws IOException {
        this.name = name;
        this.context = context;
        this.completions = new PassCompletions(completionExecutor, context.options.directCompletions());
        this.timers = new LoopTimers(name);
        this.clockMs = clockMs;
        this.onDeath = onDeath;
        this.selector = Selector.open();
    }

    /** The selector, to register the server's accept key before the loop starts. */
    Selector selector() {
        return selector;
    }

    String name() {
        return name;
    }

    // ------------------------------------------------------------------ any thread

    /** Hands a newly accepted channel to this loop; it is closed instead if the loop has stopped. */
    void adopt(SocketChannel channel) {
        if (isOwnerThread()) {
            adoptNow(channel);
            return;
        }
        adoptions.add(channel);
        if (stopping) {
            // The loop may already have swept its queue on the way out: sweep again ourselves.
            closeUnadopted();
        } else {
            wakeup();
        }
    }

    /**
     * An actor has new dispatches queued; called once per flip of its signal flag. Inside a
     * {@link HandOffBatch} (the scheduler's round of dispatches) the selector is woken once when
     * the batch closes, however many of this loop's actors were signalled.
     */
    void signal(ConnectionActor actor) {
        ready.add(actor);
        if (!HandOffBatch.deferWake(wake)) {
            wakeup();
        }
    }

    /**
     * Runs {@code task} on the loop's thread at the start of its next pass. A task's
     * {@link RuntimeException} is logged; an {@link Error} ends the loop (as any Error outside a
     * connection's handling does). A task handed to a stopped loop never runs.
     */
    void execute(Runnable task) {
        tasks.add(task);
        wakeup();
    }

    /** Asks the loop to end; returns at once. The loop closes its connections on the way out. */
    void stop() {
        stopping = true;
        wakeupPending.set(true);
        selector.wakeup();
    }

    /** Wakes the selector if it may be sleeping and no wakeup is on its way already. */
    void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    boolean isOwnerThread() {
        return Thread.currentThread() == owner;
    }

    /** True on the thread of any selector loop, which must never block. */
    static boolean onSelectorThread() {
        return CURRENT.get() != null;
    }

    /** Makes the calling thread the owner, for tests that drive {@link #doWork(long)} by hand. */
    void bindToCurrentThread() {
        owner = Thread.currentThread();
        CURRENT.set(this);
    }

    // ------------------------------------------------------------------ owner thread only

    @Override
    public void run() {
        owner = Thread.currentThread();
        CURRENT.set(this);
        log.debug("worker=- job=- - selector loop {} started", name);
        Throwable death = null;
        try {
            while (!stopping) {
                long now = clockMs.getAsLong();
                try {
                    doWork(now);
                    // Straight to select after every pass, busy or not: it returns at once when
                    // something is ready, and a busy loop that polled with selectNow first paid
                    // two epoll_wait calls per wake-up instead of one.
                    if (!stopping) {
                        sleep(clockMs.getAsLong());
                    }
                } catch (IOException | RuntimeException e) {
                    // Per-connection failures are handled inside the pass; reaching here means the
                    // selector itself misbehaved. Log and go on rather than strand every connection.
                    log.error("worker=- job=- - selector loop {} hit an unexpected error; carrying on", name, e);
                    if (!selector.isOpen()) {
                        death = e;
                        break;
                    }
                }
            }
        } catch (Throwable e) {
            // An Error outside any one connection: this thread cannot be trusted to go on.
            death = e;
            log.error("worker=- job=- - selector loop {} died; closing its connections and the server", name, e);
        } finally {
            shutdown();
        }
        if (death != null) {
            onDeath.accept(death);
        }
    }

    /**
     * One pass of the loop, without blocking.
     *
     * @param now the pass's time in milliseconds (monotonic)
     * @return how much it did: channels adopted, keys handled, actors served, connections flushed
     * @throws IOException when the selector fails
     */
    int doWork(long now) throws IOException {
        return doWork(now, null);
    }

    /**
     * One pass, with {@code afterTasks} run right after the pass's queued tasks, before any I/O:
     * a test's way to act there as another thread may (a scheduler cancelling and redispatching
     * while the selector thread is mid-pass), which a pass driven whole cannot show.
     */
    int doWork(long now, Runnable afterTasks) throws IOException {
        assert isOwnerThread() : "doWork called off the loop's thread";
        nowMs = now;
        int work = runTasks();
        if (afterTasks != null) {
            afterTasks.run();
        }
        SocketChannel channel;
        while ((channel = adoptions.poll()) != null) {
            adoptNow(channel);
            work++;
        }
        if (!selectedBySleep) {
            selector.selectNow(collectKey);
        }
        // The keys a sleep just selected are handled now; a second select would only cost a syscall.
        selectedBySleep = false;
        work += handleSelectedKeys();
        // Direct completions before the ready actors: a callback that dispatches the next job
        // has it assigned, and flushed, in this same pass.
        completions.completeIfDirect();
        ConnectionActor actor;
        while ((actor = ready.poll()) != null) {
            actor.clearSignal();
            try {
                actor.onDispatchQueued();
            } catch (Throwable e) {
                closeBroken(actor, e);
            }
            work++;
        }
        timers.runDue(now, onBroken);
        work += flushPending();
        completions.handOver(stopping);
        return work;
    }

    /** The pass's time, for actors that stamp events. */
    long nowMs() {
        assert isOwnerThread();
        return nowMs;
    }

    /** The loop's read buffer, shared by its connections: each consumes it fully before the next read. */
    ByteBuffer readBuffer() {
        assert isOwnerThread();
        return readBuffer;
    }

    /** Queues the connection to be flushed at the end of this pass. */
    void flushAtEndOfPass(ConnectionActor actor) {
        assert isOwnerThread();
        toFlush.add(actor);
    }

    /**
     * Completes a future with an outcome when the pass hands its completions over: on the
     * completion executor, or with direct completions on this thread (see {@link PassCompletions}).
     */
    void complete(CompletableFuture<JobOutcome> future, JobOutcome outcome) {
        assert isOwnerThread();
        completions.complete(future, outcome);
    }

    /** Fails a future when the pass hands its completions over; as {@link #complete}. */
    void fail(CompletableFuture<JobOutcome> future, Throwable failure) {
        assert isOwnerThread();
        completions.fail(future, failure);
    }

    /** Makes sure {@code actor}'s {@link ConnectionActor#onTimer} runs no later than {@code deadlineMs}. */
    void timerAt(ConnectionActor actor, long deadlineMs) {
        assert isOwnerThread();
        timers.at(actor, deadlineMs);
    }

    /** Runs {@code task} on this thread once the loop's clock reaches {@code atMs}; as {@link #execute}. */
    void schedule(long atMs, Runnable task) {
        assert isOwnerThread();
        timers.schedule(atMs, task);
    }

    /** Forgets a closed actor. */
    void removeActor(ConnectionActor actor) {
        assert isOwnerThread();
        int at = actor.slot;
        if (at < 0) {
            return;
        }
        int last = actors.size() - 1;
        ConnectionActor moved = actors.remove(last);
        if (at != last) {
            actors.set(at, moved);
            moved.slot = at;
        }
        actor.slot = -1;
    }

    /** Actor timer checks made so far; owner thread only (tests). */
    long timerVisits() {
        assert isOwnerThread();
        return timers.visits();
    }

    /** Connections hosted now; owner thread only (tests). */
    int connectionCount() {
        assert isOwnerThread();
        return actors.size();
    }

    private void adoptNow(SocketChannel channel) {
        SocketAddress remote;
        try {
            remote = channel.getRemoteAddress();
        } catch (IOException e) {
            log.debug("worker=- job=- - dropping a connection that closed before it was adopted: {}", e.toString());
            closeQuietly(channel);
            return;
        }
        ConnectionActor actor = new ConnectionActor(this, context, channel, remote);
        SelectionKey key;
        try {
            key = channel.register(selector, SelectionKey.OP_READ, actor);
        } catch (ClosedChannelException e) {
            log.debug("worker=- job=- - connection from {} closed before it was adopted", remote);
            closeQuietly(channel);
            return;
        }
        actor.slot = actors.size();
        actors.add(actor);
        actor.onAdopted(key, nowMs);
        timerAt(actor, nowMs + context.handshakeTimeoutMs);
    }

    private int handleSelectedKeys() {
        int handled = readyKeys.size();
        try {
            // Indexed: handling a key never selects, so nothing is added to the list meanwhile.
            for (int i = 0; i < handled; i++) {
                SelectionKey key = readyKeys.get(i);
                Object attachment = key.attachment();
                if (attachment instanceof ConnectionActor actor) {
                    try {
                        if (key.isValid() && key.isReadable()) {
                            actor.onReadable();
                        }
                        if (key.isValid() && key.isWritable()) {
                            actor.onWritable();
                        }
                    } catch (Throwable e) {
                        closeBroken(actor, e);
                    }
                } else if (attachment instanceof Acceptor acceptor) {
                    if (key.isValid() && key.isAcceptable()) {
                        try {
                            acceptor.onAcceptable();
                        } catch (RuntimeException e) {
                            log.error("worker=- job=- - accepting connections failed; carrying on", e);
                        }
                    }
                }
            }
        } finally {
            readyKeys.clear();
        }
        return handled;
    }

    private int runTasks() {
        int ran = 0;
        Runnable task;
        while ((task = tasks.poll()) != null) {
            ran++;
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("worker=- job=- - a task on selector loop {} failed; carrying on", name, e);
            }
        }
        return ran;
    }

    private int flushPending() {
        int flushed = toFlush.size();
        // Indexed: a flush that closes its actor does not touch this list.
        for (int i = 0; i < flushed; i++) {
            ConnectionActor actor = toFlush.get(i);
            try {
                actor.flush();
            } catch (Throwable e) {
                closeBroken(actor, e);
            }
        }
        toFlush.clear();
        return flushed;
    }

    /**
     * Contains whatever one connection's handling threw, an {@link Error} included (an
     * OutOfMemoryError from one huge buffer, a StackOverflowError in user code): that connection
     * is closed and its jobs fail retryably; the loop and its other connections go on. Errors that
     * say the JVM itself is broken (an InternalError, say) are rethrown and end the loop.
     */
    private void closeBroken(ConnectionActor actor, Throwable e) {
        log.error("worker=- job=- - unexpected failure handling {}; closing that connection", actor, e);
        try {
            actor.close(e);
        } catch (RuntimeException again) {
            log.error("worker=- job=- - closing {} failed as well", actor, again);
        }
        if (e instanceof VirtualMachineError && !(e instanceof OutOfMemoryError) && !(e instanceof StackOverflowError)) {
            throw (VirtualMachineError) e;
        }
    }

    private void sleep(long now) throws IOException {
        wakeupPending.set(false);
        // Re-check after clearing the flag: anything enqueued before that was missed by its
        // producer's wakeup, so go round again instead of sleeping on it.
        if (!adoptions.isEmpty() || !ready.isEmpty() || !tasks.isEmpty() || stopping) {
            wakeupPending.set(true);
            return;
        }
        long nextTimerMs = timers.nextMs();
        long timeoutMs = nextTimerMs == Long.MAX_VALUE ? 0 : Math.max(1, nextTimerMs - now);
        selector.select(collectKey, timeoutMs);
        selectedBySleep = true;
        wakeupPending.set(true);
    }

    /**
     * Closes every connection (their jobs fail retryably), closes channels not yet adopted,
     * hands over the last completions and closes the selector. Runs when the loop ends; a test
     * driving the loop by hand calls it itself.
     */
    void shutdown() {
        assert isOwnerThread();
        stopping = true;
        int closed = actors.size();
        for (int i = actors.size() - 1; i >= 0; i--) {
            ConnectionActor actor = actors.get(i);
            try {
                actor.close(new WorkerException("the coordinator's worker server is shutting down"));
            } catch (RuntimeException e) {
                log.error("worker=- job=- - closing {} during shutdown failed", actor, e);
            }
        }
        closeUnadopted();
        ready.clear();
        tasks.clear();
        timers.clear();
        completions.handOver(true);
        try {
            selector.close();
        } catch (IOException e) {
            log.warn("worker=- job=- - closing the selector of loop {} failed", name, e);
        }
        if (CURRENT.get() == this) {
            // A test thread that drove this loop by hand goes on to other work.
            CURRENT.remove();
        }
        log.debug("worker=- job=- - selector loop {} stopped; closed {}", name, Plural.of(closed, "connection"));
    }

    private void closeUnadopted() {
        SocketChannel channel;
        while ((channel = adoptions.poll()) != null) {
            closeQuietly(channel);
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            log.debug("worker=- job=- - closing a channel failed: {}", e.toString());
        }
    }
}

package dev.panoptes.remote;

import dev.panoptes.control.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Where the TLS handshakes of one server run their delegated tasks (key agreement, signing,
 * certificate checks), off the selector threads: a few threads, a bounded queue, and turns taken
 * by peer address, so that no peer can make the others wait for its handshakes.
 *
 * <ul>
 * <li><b>Bounded.</b> At most {@code capacity} tasks wait. One that finds the queue full is
 *     refused with a {@link RejectedExecutionException} saying so, and its connection closes as
 *     overloaded, rather than wait behind work that would outlast its handshake timeout. A TLS
 *     session has at most one task in flight (it reads nothing more until its task is done), so
 *     with a capacity of {@link ServerOptions#maxUnregisteredConnections()} the connections still
 *     handshaking can never fill it between them.</li>
 * <li><b>Fair.</b> Waiting tasks are kept per remote address, and the threads take one task from
 *     each address in turn: a worker's handshake waits behind at most one task per other address
 *     that has some waiting, never behind the whole backlog of one busy address.</li>
 * <li><b>Cheap when idle.</b> The threads start with the first task and end after 30 s without
 *     one.</li>
 * </ul>
 *
 * <p>Thread-safe: tasks may be submitted from any thread (the selector threads do).
 */
final class HandshakeTasks {
    private static final Logger log = LoggerFactory.getLogger(HandshakeTasks.class);
    /** The key for a peer whose address is unknown: all of them share one turn. */
    private static final Object UNKNOWN_PEER = new Object();

    private final int threads;
    private final int capacity;
    private final ThreadPoolExecutor pool;
    private final Object lock = new Object();

    // ---- guarded by lock
    /** The tasks waiting, per peer; a peer leaves the map when its last task is taken. */
    private final Map<Object, ArrayDeque<Runnable>> waiting = new HashMap<>();
    /** The peers with tasks waiting, in the order they take their next turn. */
    private final ArrayDeque<Object> turns = new ArrayDeque<>();
    private int queued;
    /** Threads taking turns now, at most {@link #threads}. */
    private int draining;
    private boolean closed;

    /**
     * @param threads    how many tasks run at once
     * @param capacity   how many may wait
     * @param namePrefix of the threads, which are daemon threads
     */
    HandshakeTasks(int threads, int capacity, String namePrefix) {
        if (threads < 1 || capacity < 1) {
            throw new IllegalArgumentException("threads and capacity must be at least 1, got " + threads + " and "
                    + capacity);
        }
        this.threads = threads;
        this.capacity = capacity;
        // Its own queue holds at most one "take turns" job per thread: the tasks wait in ours.
        this.pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                DaemonThreads.named(n -> namePrefix + n));
        pool.allowCoreThreadTimeOut(true);
    }

    /** The executor for the handshake tasks of one connection from {@code peer} (null when unknown). */
    Executor forPeer(InetAddress peer) {
        Object key = peer == null ? UNKNOWN_PEER : peer;
        return task -> submit(key, task);
    }

    /** Tasks waiting now. Any thread. */
    int queued() {
        synchronized (lock) {
            return queued;
        }
    }

    /**
     * Drops the tasks still waiting and stops the threads (a task running is interrupted).
     * Later submissions are refused. For a closing server, whose connections are closing too.
     */
    void shutdownNow() {
        synchronized (lock) {
            closed = true;
            waiting.clear();
            turns.clear();
            queued = 0;
        }
        pool.shutdownNow();
    }

    private void submit(Object peer, Runnable task) {
        boolean startThread;
        synchronized (lock) {
            if (closed) {
                throw new RejectedExecutionException("the worker server is closing");
            }
            if (queued >= capacity) {
                throw new RejectedExecutionException("the coordinator is overloaded with TLS handshakes: " + queued
                        + " handshake tasks are already waiting for a TLS thread, the most it queues; closing this"
                        + " connection (a worker retries with backoff)");
            }
            ArrayDeque<Runnable> tasks = waiting.get(peer);
            if (tasks == null) {
                tasks = new ArrayDeque<>(2);
                waiting.put(peer, tasks);
                turns.add(peer);
            }
            tasks.add(task);
            queued++;
            startThread = draining < threads;
            if (startThread) {
                draining++;
            }
        }
        if (startThread) {
            try {
                pool.execute(this::takeTurns);
            } catch (RejectedExecutionException e) {
                // Only after shutdownNow, which dropped the task as well.
                synchronized (lock) {
                    draining--;
                }
            }
        }
    }

    /** One thread's work: the next peer's next task, until none waits. */
    private void takeTurns() {
        Runnable task;
        while ((task = next()) != null) {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.warn("worker=- job=- - a TLS handshake task failed outside its session; carrying on", e);
            } catch (Error e) {
                synchronized (lock) {
                    draining--;
                }
                throw e;
            }
        }
    }

    private Runnable next() {
        synchronized (lock) {
            Object peer = turns.poll();
            if (peer == null) {
                draining--;
                return null;
            }
            ArrayDeque<Runnable> tasks = waiting.get(peer);
            Runnable task = tasks.poll();
            if (tasks.isEmpty()) {
                waiting.remove(peer);
            } else {
                turns.add(peer); // to the back: every other peer waiting goes first
            }
            queued--;
            return task;
        }
    }
}

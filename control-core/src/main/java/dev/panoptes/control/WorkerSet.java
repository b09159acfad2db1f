package dev.panoptes.control;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A thread-safe live set of workers: the common part of {@link dev.panoptes.control.local.LocalPool}
 * and the coordinator's pool of remote workers.
 *
 * <p>Membership is by identity: two handles with the same {@link WorkerHandle#id()} (two
 * connections from one worker id, say) are two members, and {@link #remove} takes out exactly
 * the handle it is given. Listeners run after each change, on the changing thread.
 */
public class WorkerSet implements WorkerSource {
    private static final Logger log = LoggerFactory.getLogger(WorkerSet.class);
    private final Object lock = new Object();
    /** Guarded by {@code lock}: the members in joining order. */
    private final List<WorkerHandle> members = new ArrayList<>();
    /** Guarded by {@code lock}: the same members, for an O(1) membership test by identity. */
    private final Set<WorkerHandle> index = Collections.newSetFromMap(new IdentityHashMap<>());
    /**
     * The last snapshot, or null after a change. Built on demand, not on every change: with
     * thousands of workers registering at once, copying the list per change was quadratic.
     */
    private volatile List<WorkerHandle> snapshot = List.of();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final List<LateSpendListener> lateSpendListeners = new CopyOnWriteArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    /** Adds a worker; adding the same handle twice has no effect. @return true when added */
    public boolean add(WorkerHandle worker) {
        synchronized (lock) {
            if (!index.add(worker)) {
                return false;
            }
            members.add(worker);
            snapshot = null;
        }
        fireChanged();
        return true;
    }

    /** Removes exactly this handle (by identity). @return true when it was a member */
    public boolean remove(WorkerHandle worker) {
        synchronized (lock) {
            if (!index.remove(worker)) {
                return false;
            }
            for (int i = members.size() - 1; i >= 0; i--) {
                if (members.get(i) == worker) {
                    members.remove(i);
                    break;
                }
            }
            snapshot = null;
        }
        fireChanged();
        return true;
    }

    /** The number of members now. */
    public int size() {
        synchronized (lock) {
            return members.size();
        }
    }

    /** True when this very handle is a member now. */
    public boolean contains(WorkerHandle worker) {
        synchronized (lock) {
            return index.contains(worker);
        }
    }

    /** True when there is no member now. */
    public boolean isEmpty() {
        return size() == 0;
    }

    /** The sum of the members' capacities now. */
    public int totalCapacity() {
        int total = 0;
        for (WorkerHandle w : snapshot()) {
            total += w.capacity();
        }
        return total;
    }

    @Override
    public List<WorkerHandle> snapshot() {
        List<WorkerHandle> current = snapshot;
        if (current != null) {
            return current;
        }
        synchronized (lock) {
            if (snapshot == null) {
                snapshot = List.copyOf(members);
            }
            return snapshot;
        }
    }

    /**
     * Marks the set as failed for good: whatever supplies its workers has died. The first cause
     * is kept; listeners are told. Any thread.
     */
    public void fail(Throwable cause) {
        if (failure.compareAndSet(null, Objects.requireNonNull(cause, "cause"))) {
            fireChanged();
        }
    }

    @Override
    public Throwable failure() {
        return failure.get();
    }

    @Override
    public void addListener(Runnable onChange) {
        listeners.add(onChange);
    }

    @Override
    public void removeListener(Runnable onChange) {
        listeners.remove(onChange);
    }

    @Override
    public void addLateSpendListener(LateSpendListener listener) {
        lateSpendListeners.add(listener);
    }

    @Override
    public void removeLateSpendListener(LateSpendListener listener) {
        lateSpendListeners.remove(listener);
    }

    /**
     * An answer for {@code job} came from {@code worker} after its attempt had ended, having spent
     * {@code usage}: tells the late-spend listeners, on the calling thread. Nothing when the usage
     * is null or zero. Any thread; a listener that throws is logged.
     */
    public void spentLate(Job job, WorkerHandle worker, Usage usage) {
        if (usage == null || usage.totalTokens() <= 0) {
            return;
        }
        for (LateSpendListener listener : lateSpendListeners) {
            try {
                listener.spentLate(job, worker, usage);
            } catch (RuntimeException e) {
                log.warn("worker={} job={} - a late-spend listener failed; carrying on", worker.id(), job.id(), e);
            }
        }
    }

    private void fireChanged() {
        for (Runnable listener : listeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                // A broken listener must not undo the change for everyone else, nor fail the
                // thread that made it (for remote workers, a selector thread).
                log.warn("a listener of the worker set failed; carrying on", e);
            }
        }
    }
}

package dev.panoptes.control;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A thread-safe live set of workers: the common part of {@link dev.panoptes.control.local.LocalPool}
 * and the coordinator's pool of remote workers.
 *
 * <p>Membership is by identity: two handles with the same {@link WorkerHandle#id()} (two
 * connections from one worker id, say) are two members, and {@link #remove} takes out exactly
 * the handle it is given. Listeners run after each change, on the changing thread.
 */
public class WorkerSet implements WorkerSource {
    private final Object lock = new Object();
    /** Guarded by {@code lock} for writes; replaced, never mutated, so readers need no lock. */
    private volatile List<WorkerHandle> members = List.of();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    /** Adds a worker; adding the same handle twice has no effect. @return true when added */
    public boolean add(WorkerHandle worker) {
        synchronized (lock) {
            if (indexOf(members, worker) >= 0) {
                return false;
            }
            List<WorkerHandle> next = new ArrayList<>(members);
            next.add(worker);
            members = List.copyOf(next);
        }
        fireChanged();
        return true;
    }

    /** Removes exactly this handle (by identity). @return true when it was a member */
    public boolean remove(WorkerHandle worker) {
        synchronized (lock) {
            int at = indexOf(members, worker);
            if (at < 0) {
                return false;
            }
            List<WorkerHandle> next = new ArrayList<>(members);
            next.remove(at);
            members = List.copyOf(next);
        }
        fireChanged();
        return true;
    }

    /** The number of members now. */
    public int size() {
        return members.size();
    }

    /** True when there is no member now. */
    public boolean isEmpty() {
        return members.isEmpty();
    }

    /** The sum of the members' capacities now. */
    public int totalCapacity() {
        int total = 0;
        for (WorkerHandle w : members) {
            total += w.capacity();
        }
        return total;
    }

    @Override
    public List<WorkerHandle> snapshot() {
        return members;
    }

    @Override
    public void addListener(Runnable onChange) {
        listeners.add(onChange);
    }

    @Override
    public void removeListener(Runnable onChange) {
        listeners.remove(onChange);
    }

    private void fireChanged() {
        for (Runnable listener : listeners) {
            listener.run();
        }
    }

    private static int indexOf(List<WorkerHandle> list, WorkerHandle worker) {
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == worker) {
                return i;
            }
        }
        return -1;
    }
}

package dev.panoptes.control.schedule;

import dev.panoptes.control.Job;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * The jobs of one run that wait to be sent: those ready now, in the order they are to go, and
 * those held back until a time (a retry's backoff, a pause after refusals), in due order.
 *
 * <p>A job never sent waits as its {@link Job} alone, and gets its {@link JobState} when the
 * dispatcher looks at it ({@link #ready()}): a run of a million jobs holds a state only for those
 * sent, not a million made before the first dispatch (64 MB the collector copied, and a new
 * run's first dispatch waited for).
 *
 * <p>Owned by the thread running the scheduler's {@code run}; not thread-safe. A job is in at
 * most one of the two queues, and in neither while it is in flight or settled.
 */
final class WaitingJobs {
    /** Each a {@link JobState}, or the {@link Job} of one never sent (whose state is fresh). */
    private final ArrayDeque<Object> ready = new ArrayDeque<>();
    private final PriorityQueue<JobState> delayed = new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));
    /**
     * How many waiting jobs (ready or held back) ask for each model, null for "any"; a model leaves
     * when its count reaches 0. Kept on every add and take so {@link #wantedModels()} costs the
     * number of models, not of jobs: it runs whenever nothing is in flight, with up to the whole
     * unsent suite waiting.
     */
    private final Map<String, int[]> perModel = new LinkedHashMap<>();

    /** Queues the job behind the ready ones. */
    void add(JobState state) {
        ready.add(state);
        count(state.job, 1);
    }

    /** Queues a job never sent behind the ready ones; its state is made when it is looked at. */
    void add(Job job) {
        ready.add(job);
        count(job, 1);
    }

    /** Queues the job ahead of the ready ones: it goes next. */
    void addFirst(JobState state) {
        ready.addFirst(state);
        count(state.job, 1);
    }

    /** Holds the job back until {@code dueNanos} (the run's clock). */
    void delay(JobState state, long dueNanos) {
        state.dueNanos = dueNanos;
        delayed.add(state);
        count(state.job, 1);
    }

    private void count(Job job, int delta) {
        String model = job.model();
        int[] n = perModel.get(model);
        if (n == null) {
            perModel.put(model, new int[] {delta});
        } else if ((n[0] += delta) == 0) {
            perModel.remove(model);
        }
    }

    /** Makes every held-back job that is due by {@code now} ready, behind those ready already. */
    void promoteDue(long now) {
        while (!delayed.isEmpty() && delayed.peek().dueNanos - now <= 0) {
            ready.add(delayed.poll());
        }
    }

    /** Nanoseconds until the next held-back job is due (0 when one is overdue), or {@link Long#MAX_VALUE}. */
    long nanosToNextDue(long now) {
        return delayed.isEmpty() ? Long.MAX_VALUE : Math.max(0, delayed.peek().dueNanos - now);
    }

    /** True when no job is ready now (some may be held back). */
    boolean noneReady() {
        return ready.isEmpty();
    }

    /** The number of jobs ready now. */
    int readyCount() {
        return ready.size();
    }

    /**
     * The ready jobs in sending order; {@link Iterator#remove()} takes the one sent. A job never
     * sent is given a fresh state, which is its own once it is taken (and made again, as fresh,
     * if it is not: nothing about it changed).
     */
    Iterator<JobState> ready() {
        Iterator<Object> it = ready.iterator();
        return new Iterator<>() {
            private JobState last;

            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public JobState next() {
                last = stateOf(it.next());
                return last;
            }

            @Override
            public void remove() {
                it.remove();
                count(last.job, -1);
            }
        };
    }

    private static JobState stateOf(Object waiting) {
        return waiting instanceof JobState state ? state : new JobState((Job) waiting);
    }

    /** Takes every waiting job out, ready ones first. */
    List<JobState> drain() {
        List<JobState> all = new ArrayList<>(ready.size() + delayed.size());
        for (Object waiting : ready) {
            all.add(stateOf(waiting));
        }
        all.addAll(delayed);
        ready.clear();
        delayed.clear();
        perModel.clear();
        return all;
    }

    /** The models the waiting jobs ask for (null among them for "any"). */
    Set<String> wantedModels() {
        return new LinkedHashSet<>(perModel.keySet());
    }
}

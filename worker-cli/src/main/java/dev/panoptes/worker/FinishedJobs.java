package dev.panoptes.worker;

import dev.panoptes.control.JobOutcome;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The hand-off of finished jobs from whichever thread finished them to the session's I/O thread,
 * which alone answers them.
 *
 * <p><b>Threads.</b> {@link #onDone} is called on the runner's threads, or on the I/O thread when
 * a job completes while it is being started. A runner thread queues the answer and wakes the I/O
 * thread through the {@code wakeup} it was given (which wakes it once, however many finish
 * together); the I/O thread keeps its own in a plain list, with no queue and no wake-up. Every
 * other method belongs to the I/O thread, set by {@link #bind}; {@link #clear} also to a thread
 * closing a session that never served.
 */
final class FinishedJobs {
    /** A finished job, waiting to be answered. */
    record Answer(HeldJob job, JobOutcome outcome, Throwable error) {
    }

    private final Runnable wakeup;
    /** Answers queued by runner threads. */
    private final ConcurrentLinkedQueue<Answer> queued = new ConcurrentLinkedQueue<>();
    /** I/O thread only: answers of jobs that finished on this thread, while being started. */
    private final List<Answer> inline = new ArrayList<>();
    private volatile Thread ioThread;

    /** @param wakeup wakes the I/O thread; any thread, cheap when it is awake already */
    FinishedJobs(Runnable wakeup) {
        this.wakeup = wakeup;
    }

    /** Names the I/O thread: its completions skip the queue. */
    void bind(Thread ioThread) {
        this.ioThread = ioThread;
    }

    /** A job finished, on whatever thread finished it. */
    void onDone(HeldJob job, JobOutcome outcome, Throwable error) {
        if (Thread.currentThread() == ioThread) {
            inline.add(new Answer(job, outcome, error));
            return;
        }
        queued.add(new Answer(job, outcome, error));
        wakeup.run();
    }

    /** How many answers finished on the I/O thread wait to be taken. I/O thread. */
    int inlineCount() {
        return inline.size();
    }

    /** True when no answer waits. I/O thread. */
    boolean isEmpty() {
        return queued.isEmpty() && inline.isEmpty();
    }

    /** Hands every waiting answer to {@code sink}, the I/O thread's own first. I/O thread. */
    void takeAll(Consumer<Answer> sink) {
        for (int i = 0; i < inline.size(); i++) {
            sink.accept(inline.get(i));
        }
        inline.clear();
        Answer a;
        while ((a = queued.poll()) != null) {
            sink.accept(a);
        }
    }

    /** Drops every waiting answer: the session is closing and writes none of them. */
    void clear() {
        queued.clear();
        inline.clear();
    }
}

package dev.panoptes.remote;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.PriorityQueue;
import java.util.function.BiConsumer;

/**
 * The deadlines of one {@link SelectorLoop}: each actor's next deadline, earliest first, so that
 * a due deadline visits its own actor only and not every actor of the loop, and one-off tasks
 * (an acceptor's back-off, a log line's quiet period) to run at a time.
 *
 * <p><b>Threads.</b> Not thread-safe: the loop's owner thread only.
 *
 * <p><b>Promises.</b> An actor's deadline is checked at most once per pass, and an entry that a
 * later, earlier deadline superseded (its time is no longer the actor's
 * {@link ConnectionActor#timerMs}) is skipped when it comes up. A task or actor that throws does
 * not stop the others: a task's exception is logged, an actor's closes that actor.
 */
final class LoopTimers {
    private static final Logger log = LoggerFactory.getLogger(LoopTimers.class);

    /** A task to run on the loop's thread once the loop's clock reaches {@code atMs}. */
    private record Timer(long atMs, Runnable task) {
    }

    /** An actor to check once the loop's clock reaches {@code atMs}. */
    private record ActorTimer(long atMs, ConnectionActor actor) {
    }

    private final String loopName;
    private final PriorityQueue<Timer> timers = new PriorityQueue<>((a, b) -> Long.compare(a.atMs, b.atMs));
    private final PriorityQueue<ActorTimer> actorTimers = new PriorityQueue<>((a, b) -> Long.compare(a.atMs, b.atMs));
    private long nextMs = Long.MAX_VALUE;
    /** Calls of {@link ConnectionActor#onTimer} so far, for tests of what a due deadline costs. */
    private long visits;

    LoopTimers(String loopName) {
        this.loopName = loopName;
    }

    /** Makes sure {@code actor}'s {@link ConnectionActor#onTimer} runs no later than {@code deadlineMs}. */
    void at(ConnectionActor actor, long deadlineMs) {
        if (deadlineMs < actor.timerMs) {
            actor.timerMs = deadlineMs;
            actorTimers.add(new ActorTimer(deadlineMs, actor));
        }
        nextMs = Math.min(nextMs, deadlineMs);
    }

    /** Runs {@code task} once the loop's clock reaches {@code atMs}. */
    void schedule(long atMs, Runnable task) {
        timers.add(new Timer(atMs, task));
        nextMs = Math.min(nextMs, atMs);
    }

    /** The earliest deadline, {@code Long.MAX_VALUE} when there is none. */
    long nextMs() {
        return nextMs;
    }

    long visits() {
        return visits;
    }

    /**
     * Runs the due tasks and checks the due actors.
     *
     * @param onBroken told of an actor whose check threw, to close it
     */
    void runDue(long now, BiConsumer<ConnectionActor, Throwable> onBroken) {
        if (now < nextMs) {
            return;
        }
        while (!timers.isEmpty() && timers.peek().atMs() <= now) {
            try {
                timers.poll().task().run();
            } catch (RuntimeException e) {
                log.error("worker=- job=- - a timer on selector loop {} failed; carrying on", loopName, e);
            }
        }
        ActorTimer due;
        while ((due = actorTimers.peek()) != null && due.atMs() <= now) {
            actorTimers.poll();
            ConnectionActor actor = due.actor();
            if (actor.slot < 0 || due.atMs() != actor.timerMs) {
                // Closed, or superseded by an earlier deadline whose check has run already.
                continue;
            }
            actor.timerMs = Long.MAX_VALUE;
            visits++;
            long next;
            try {
                next = actor.onTimer(now);
            } catch (Throwable e) {
                onBroken.accept(actor, e);
                continue;
            }
            if (next != Long.MAX_VALUE && actor.slot >= 0) {
                // Never again at this instant: a deadline is checked once per pass at most.
                at(actor, Math.max(next, now + 1));
            }
        }
        long next = timers.isEmpty() ? Long.MAX_VALUE : timers.peek().atMs();
        if (!actorTimers.isEmpty()) {
            next = Math.min(next, actorTimers.peek().atMs());
        }
        nextMs = next;
    }

    void clear() {
        timers.clear();
        actorTimers.clear();
    }
}

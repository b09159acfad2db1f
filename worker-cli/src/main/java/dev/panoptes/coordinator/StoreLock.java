package dev.panoptes.coordinator;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * What keeps a second coordinator off a coordinator's results while it runs: SQLite's
 * {@link DatabaseLock} (one coordinator per file) or PostgreSQL's {@link PostgresRunLock} (one
 * coordinator per run), chosen by the {@link DatabaseTarget}. Held from acquiring to
 * {@link #close()}, unless it is lost first (see {@link #watch}); every method may be called from
 * any thread.
 */
interface StoreLock extends AutoCloseable {
    /** Holds nothing: for the phase in which a target needs no lock. */
    StoreLock NONE = new StoreLock() {
        @Override
        public void listening(InetSocketAddress address) {
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return "StoreLock.NONE";
        }
    };

    /** Records where this coordinator listens, so that a refused one can name it. Never throws. */
    void listening(InetSocketAddress address);

    /**
     * Re-verifies the lock every {@code interval} on a daemon thread of its own, and tells
     * {@code onLost} once, on that thread, when it finds the lock gone or can no longer prove it
     * held; the lock is then released (nothing is checked any more, {@link #close()} has nothing
     * left to do). Nothing is ever re-acquired: whoever holds a lost lock's run now, and whatever
     * they wrote meanwhile, cannot be known from here.
     *
     * <p>Only a lock that can vanish while its process lives needs this: PostgreSQL's, whose
     * session a server restart, a network cut, {@code idle_session_timeout} or a pooling proxy can
     * end. SQLite's OS lock ends only with its process, and {@link #NONE} holds nothing, so for
     * them (the default) it does nothing. Call it at most once; calling it on a closed lock does
     * nothing.
     *
     * @param interval how often to check; positive
     * @param timeout  how long one check may wait for an answer before the lock counts as lost; positive
     * @param onLost   told why, once; it must return quickly and must not block on the run
     * @throws IllegalArgumentException when a duration is not positive
     * @throws IllegalStateException    when the lock is already watched
     */
    default void watch(Duration interval, Duration timeout, Consumer<LostException> onLost) {
    }

    /**
     * The run's takeover epoch taken with this lock ({@link dev.panoptes.control.store.RunLeases}),
     * which the coordinator's store is fenced by; 0 for a lock that takes none (SQLite's, {@link #NONE}).
     */
    default long epoch() {
        return 0;
    }

    /** Releases the lock. Idempotent; never throws. */
    @Override
    void close();

    /**
     * A lock was lost while its coordinator ran: another coordinator may take the run now. The
     * message is one line saying which lock and why, e.g. {@code lost the lock on run 3f2a... in
     * postgresql://db:5432/evals (user ci): the server ended the session holding it (FATAL:
     * terminating connection due to administrator command)}.
     */
    final class LostException extends Exception {
        private static final long serialVersionUID = 1L;

        LostException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}

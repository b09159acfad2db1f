package dev.panoptes.worker;

import java.net.InetSocketAddress;

/**
 * What keeps a second coordinator off a coordinator's results while it runs: SQLite's
 * {@link DatabaseLock} (one coordinator per file) or PostgreSQL's {@link PostgresRunLock} (one
 * coordinator per run), chosen by the {@link DatabaseTarget}. Held from acquiring to
 * {@link #close()}; both methods may be called from any thread.
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

    /** Releases the lock. Idempotent; never throws. */
    @Override
    void close();
}

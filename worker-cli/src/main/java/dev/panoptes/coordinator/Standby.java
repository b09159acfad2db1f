package dev.panoptes.coordinator;

import dev.panoptes.console.Durations;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A standby coordinator's wait ({@code coordinator --standby}): while another coordinator holds
 * the run, it answers workers on its address that it does not hold the run
 * ({@link StandbyListener}), and waits on the run's lock; once it holds it (the holder's session
 * ended: it died, or stopped checking its lock for a lease, see {@link PostgresRunLock#watch}), the
 * run goes on from the store as a resumed run does, its writes fencing the old holder's
 * ({@link dev.panoptes.control.store.RunLeases}).
 *
 * <p>Runs on the run's thread; stateless.
 */
final class Standby {
    /** How often the standby tries the lock: the takeover's delay after the holder's session ends. */
    static final Duration POLL = Duration.ofMillis(250);

    private Standby() {
    }

    /** The run's lock, taken over, and the worker address the standby answered on (null for none). */
    record Taken(StoreLock lock, InetSocketAddress bound) {
    }

    /**
     * Waits for the run's lock and takes it.
     *
     * @param answerWorkers whether to answer workers on {@code listen} meanwhile (not over TLS, whose
     *                      workers get a refused connection instead, and move on all the same)
     * @param say           prints a console line
     * @return the lock, or null when the thread was interrupted (nothing was held or written)
     * @throws IOException when the database cannot be reached, or the address cannot be bound
     */
    static Taken await(DatabaseTarget target, String runId, InetSocketAddress listen, boolean answerWorkers,
                       Consumer<String> say) throws IOException {
        StandbyListener listener = answerWorkers ? StandbyListener.start(listen, runId) : null;
        InetSocketAddress bound = listener == null ? null : listener.address();
        long start = System.nanoTime();
        try {
            StoreLock lock = target.awaitRun(runId, bound != null ? bound : listen, POLL, holder ->
                    say.accept("standby: run " + runId + " in " + target + " is held by " + holder + "; "
                            + (bound == null ? "" : "telling workers on " + CoordinatorRun.hostPort(bound)
                            + " to try their next --coordinator address, and ")
                            + "taking the run over when that coordinator's lock ends"));
            say.accept("standby: took over run " + runId + " (takeover epoch " + lock.epoch() + ") after "
                    + Durations.format(Duration.ofNanos(System.nanoTime() - start)) + " on standby; resuming it"
                    + " from the store");
            return new Taken(lock, bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            if (listener != null) {
                listener.close();
            }
        }
    }
}

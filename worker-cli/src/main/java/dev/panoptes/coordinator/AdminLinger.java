package dev.panoptes.coordinator;

import dev.panoptes.console.Durations;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * Keeps a finished coordinator's admin endpoint up a little longer ({@code --admin-linger}), so
 * that Prometheus, which scrapes every 15 s or so, reads the run's final counters before the
 * process exits (docs/OPERATIONS.md, "Metrics"). A batch job's usual alternative, pushing to a
 * Pushgateway, needs one more service to run and an HTTP client to write; a linger needs neither
 * and keeps {@code /status} readable too.
 *
 * <p>Runs on the command's thread, which an interrupt (Ctrl-C or SIGTERM, through the command's
 * shutdown hook) ends at once.
 */
public final class AdminLinger {
    /** Long enough for two scrapes at Prometheus's common 15 s interval, with some slack. */
    static final Duration DEFAULT = Duration.ofSeconds(35);

    private AdminLinger() {
    }

    /**
     * Says, in one line on {@code console}, how long the endpoint at {@code admin} stays up and how
     * to skip that, then waits that long. Returns at once for a zero linger or no endpoint.
     *
     * @param admin   where the endpoint listens, or null when there is none
     * @param linger  how long to wait; zero or positive
     * @param console where the line goes
     * @throws InterruptedException when the thread is interrupted while waiting (Ctrl-C)
     */
    public static void await(InetSocketAddress admin, Duration linger, PrintWriter console) throws InterruptedException {
        Objects.requireNonNull(linger, "linger");
        if (admin == null || linger.isZero() || linger.isNegative()) {
            return;
        }
        console.println("admin endpoint http://" + CoordinatorRun.hostPort(admin) + "/ stays up for "
                + Durations.format(linger) + " so that scrapers read the final figures (--admin-linger);"
                + " Ctrl-C exits now, --admin-linger 0 exits at once next time");
        console.flush();
        Thread.sleep(linger.toMillis());
    }
}

package dev.panoptes.coordinator;

import dev.panoptes.control.schedule.EndpointGovernor;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.WorkerServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Tells the person at the coordinator's console about workers joining, being refused and
 * leaving, through the {@link ProgressPrinter}. Called on the worker server's events thread.
 *
 * <p>Each refusal is printed once per host and reason a minute, so that a worker (or a port
 * scanner) retrying with a wrong token does not flood the console; every refusal is counted,
 * and {@link #rejectionsNote()} sums them up for the "waiting for workers" message.
 */
final class FleetReporter implements WorkerServer.Listener {
    private static final Logger log = LoggerFactory.getLogger(FleetReporter.class);
    private static final long REPEAT_AFTER_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final ProgressPrinter progress;
    private final LongSupplier clockNanos;
    private final AtomicLong rejections = new AtomicLong();
    private final AtomicReference<String> lastRejection = new AtomicReference<>();
    /** When each (host, reason) was last printed. */
    private final Map<String, Long> printedAt = new ConcurrentHashMap<>();
    /** Set once the run is over: the workers dropped by the server's shutdown are not news. */
    private volatile boolean quiet;
    /** Where workers' 429 reports go; null when the fleet's rate is not governed. Set before the server starts. */
    private volatile EndpointGovernor governor;

    FleetReporter(ProgressPrinter progress) {
        this(progress, System::nanoTime);
    }

    FleetReporter(ProgressPrinter progress, LongSupplier clockNanos) {
        this.progress = progress;
        this.clockNanos = clockNanos;
    }

    @Override
    public void onRegistered(RemoteWorker worker) {
        progress.message("worker " + worker.id() + " registered from " + worker.remoteAddress() + " (capacity "
                + worker.capacity() + (worker.models().isEmpty() ? ", no models named" : ", serves "
                + String.join(", ", worker.models())) + ")");
    }

    @Override
    public void onRejected(SocketAddress remote, String reason) {
        rejections.incrementAndGet();
        String host = remote instanceof InetSocketAddress inet ? inet.getHostString() : String.valueOf(remote);
        lastRejection.set("from " + host + ": " + reason);
        long now = clockNanos.getAsLong();
        Long last = printedAt.get(host + '\n' + reason);
        if (last == null || now - last >= REPEAT_AFTER_NANOS) {
            printedAt.put(host + '\n' + reason, now);
            progress.message("worker rejected from " + remote + ": " + reason);
        }
    }

    @Override
    public void onLost(RemoteWorker worker, Throwable cause) {
        if (quiet) {
            return;
        }
        String why = cause == null ? "connection closed" : cause.getMessage();
        progress.message("worker " + worker.id() + " lost: " + why);
        log.debug("worker={} - lost", worker.id(), cause);
    }

    @Override
    public void onFailed(Throwable cause) {
        progress.message("the worker server failed: a selector thread died of " + cause + "; stopping the run");
    }

    /** Stops reporting losses: the run is over. */
    void quiet() {
        quiet = true;
    }

    /** " 3 connections were refused so far (last from 10.0.0.7: wrong token ...)", or "" when none. */
    String rejectionsNote() {
        long n = rejections.get();
        if (n == 0) {
            return "";
        }
        return " " + n + (n == 1 ? " connection was" : " connections were") + " refused so far (last "
                + lastRejection.get() + ")";
    }

    /** Sends workers' 429 reports to {@code governor} from now on. */
    FleetReporter governedBy(EndpointGovernor governor) {
        this.governor = governor;
        return this;
    }

    @Override
    public void onThrottled(RemoteWorker worker, long count) {
        EndpointGovernor g = governor;
        if (g != null) {
            g.onThrottled(worker.endpoint(), count);
        }
    }
}

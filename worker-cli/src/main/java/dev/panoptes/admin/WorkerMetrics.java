package dev.panoptes.admin;

import dev.panoptes.control.AsyncJobRunner;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A worker's meters: its jobs (through {@link MeasuringJobRunner}) and its connection to the
 * coordinator, read from the reconnect loop at scrape time.
 *
 * <ul>
 *   <li>{@code panoptes_worker_connected} (gauge): 1 while registered with the coordinator, else 0</li>
 *   <li>{@code panoptes_worker_reconnects_total} (counter): connections after the first</li>
 * </ul>
 */
public final class WorkerMetrics {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    /** The registry {@code /metrics} serves. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Wraps the worker's runner so that its jobs are measured. */
    public AsyncJobRunner measure(AsyncJobRunner runner) {
        return new MeasuringJobRunner(runner, registry);
    }

    /** Held here so that the meters reading them keep working; see {@link #watchConnection}. */
    private BooleanSupplier connected;
    private LongSupplier connections;

    /**
     * Watches the worker's connection. Call once.
     *
     * @param connected   true while a session is registered with the coordinator; any thread
     * @param connections connections made so far, the first included; any thread
     */
    public void watchConnection(BooleanSupplier connected, LongSupplier connections) {
        // Micrometer holds what a gauge or function counter reads only weakly: a lambda nothing
        // else holds is collected, and the gauge then reads NaN while the worker is registered.
        this.connected = connected;
        this.connections = connections;
        Gauge.builder("panoptes.worker.connected", connected, c -> c.getAsBoolean() ? 1 : 0)
                .description("1 while the worker is registered with its coordinator, else 0").strongReference(true)
                .register(registry);
        FunctionCounter.builder("panoptes.worker.reconnects", connections, c -> Math.max(0, c.getAsLong() - 1))
                .description("Connections to the coordinator after the first").register(registry);
    }
}

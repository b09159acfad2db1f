package dev.panoptes.admin;

import dev.panoptes.control.store.ResultStore;
import dev.panoptes.remote.RemoteWorker;
import dev.panoptes.remote.WorkerServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

/**
 * A coordinator run's admin side, put together: the registry, the run's {@link RunStatus} and
 * {@link CoordinatorMetrics}, and the {@link AdminServer} that serves them. The run plugs it in
 * at three seams: the scheduler's listener ({@link #status()}), the worker server's listener
 * ({@link #alongside}) and the store the scheduler writes to ({@link #timed}).
 *
 * <p>It outlives the run on purpose: the last figures stay readable until {@link #close()}.
 */
public final class CoordinatorAdmin implements AutoCloseable {
    private final PrometheusMeterRegistry registry;
    private final RunStatus status;
    private final AdminServer server;

    private CoordinatorAdmin(PrometheusMeterRegistry registry, RunStatus status, AdminServer server) {
        this.registry = registry;
        this.status = status;
        this.server = server;
    }

    /**
     * Binds the admin endpoint and starts serving.
     *
     * @param token              the secret {@code /metrics} and {@code /status} require (the
     *                           workers' token), or null for none
     * @param openBeyondLoopback true to serve without a token on an address other machines reach
     *                           ({@code --metrics-insecure})
     * @throws IllegalArgumentException when there is no token, {@code bind} is not a loopback
     *                                  address and {@code openBeyondLoopback} is false
     * @throws IOException              when the address cannot be bound
     */
    public static CoordinatorAdmin start(InetSocketAddress bind, String token, boolean openBeyondLoopback,
                                         String runId, String suite, List<String> models, String scorer, int epochs)
            throws IOException {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CoordinatorMetrics metrics = new CoordinatorMetrics(registry);
        RunStatus status = new RunStatus(runId, suite, models, scorer, epochs, metrics);
        metrics.watch(status);
        AdminServer server = AdminServer.start(bind, registry, status::json, token, openBeyondLoopback);
        return new CoordinatorAdmin(registry, status, server);
    }

    /** Where it listens (the real port when port 0 was asked for). */
    public InetSocketAddress address() {
        return server.address();
    }

    /** The scheduler's listener: add it to the run's progress listeners. */
    public RunStatus status() {
        return status;
    }

    /** The registry behind {@code /metrics}. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** A worker server listener that tells {@code first}, then the status. */
    public WorkerServer.Listener alongside(WorkerServer.Listener first) {
        return new WorkerServer.Listener() {
            @Override
            public void onRegistered(RemoteWorker worker) {
                first.onRegistered(worker);
                status.onRegistered(worker);
            }

            @Override
            public void onRejected(SocketAddress remote, String reason) {
                first.onRejected(remote, reason);
                status.onRejected(remote, reason);
            }

            @Override
            public void onLost(RemoteWorker worker, Throwable cause) {
                first.onLost(worker, cause);
                status.onLost(worker, cause);
            }

            @Override
            public void onThrottled(RemoteWorker worker, long count) {
                first.onThrottled(worker, count);
                status.onThrottled(worker, count);
            }

            @Override
            public void onFailed(Throwable cause) {
                first.onFailed(cause);
                status.onFailed(cause);
            }
        };
    }

    /** The store, its writes timed ({@code panoptes_store_write_seconds}). */
    public ResultStore timed(ResultStore store) {
        return new TimedResultStore(store, registry);
    }

    /** The run is over: the status view says so. */
    public void finished() {
        status.markFinished();
    }

    /** Stops the endpoint; idempotent. */
    @Override
    public void close() {
        server.close();
    }
}

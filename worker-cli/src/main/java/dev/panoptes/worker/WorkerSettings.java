package dev.panoptes.worker;

import dev.panoptes.console.Durations;
import dev.panoptes.control.Redaction;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything {@code java -jar worker.jar} was told, checked and with defaults applied: what
 * {@link WorkerMain} hands to the code that starts the worker. {@link #toString()} and
 * {@link #startupLine()} never print the API key or the token.
 *
 * @param coordinators   where the coordinator listens: one address, or a primary's and its
 *                       standbys', tried in turn (see {@link WorkerLoop}); at least one
 * @param modelApi       base URL of the OpenAI-compatible API
 * @param models         the models to offer (--model); empty to offer what the model API lists
 * @param apiKey         the model API's key, or null
 * @param workerId       a valid worker id
 * @param capacity       jobs held at once, at least 1
 * @param requests       model API requests kept in flight at once, shared by the jobs held, at least 1
 * @param options        token, heartbeat, connect timeout and backoff
 * @param grace          how long a graceful shutdown waits for held jobs
 * @param requestTimeout the model API's per-request timeout, or null for the client's default
 * @param checkModelApi  whether to check the model API before registering (false with
 *                       {@code --no-model-check})
 * @param verbose        whether -v was given
 * @param metrics        where to serve {@code GET /metrics} (--metrics), or null for nowhere; behind
 *                       {@code options.token()} when there is one
 * @param metricsInsecure without a token, serve {@code metrics} even where other machines reach it
 *                       (--metrics-insecure); else only a loopback address is served
 * @param sandboxes      sandboxes at once for commands of tool-using samples (--sandboxes), at
 *                       least 0; 0 for none, and then no sandbox check at start
 */
public record WorkerSettings(List<InetSocketAddress> coordinators, URI modelApi, List<String> models, String apiKey,
                             String workerId, int capacity, int requests, WorkerOptions options, Duration grace,
                             Duration requestTimeout, boolean checkModelApi, boolean verbose,
                             InetSocketAddress metrics, boolean metricsInsecure, int sandboxes) {
    /** @throws NullPointerException when a required part is missing */
    public WorkerSettings {
        coordinators = List.copyOf(Objects.requireNonNull(coordinators, "coordinators"));
        if (coordinators.isEmpty()) {
            throw new IllegalArgumentException("worker " + workerId + " needs at least one coordinator address");
        }
        Objects.requireNonNull(modelApi, "modelApi");
        models = List.copyOf(Objects.requireNonNull(models, "models"));
        WorkerIds.requireValid(workerId);
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(grace, "grace");
        WorkerIds.requireCapacity(workerId, capacity);
        if (requests < 1) {
            throw new IllegalArgumentException("worker " + workerId + " needs at least 1 request in flight, got "
                    + requests);
        }
        if (sandboxes < 0) {
            throw new IllegalArgumentException("worker " + workerId + " cannot run " + sandboxes + " sandboxes at once");
        }
    }

    /** Settings of a worker with one coordinator. */
    public WorkerSettings(InetSocketAddress coordinator, URI modelApi, List<String> models, String apiKey,
                          String workerId, int capacity, int requests, WorkerOptions options, Duration grace,
                          Duration requestTimeout, boolean checkModelApi, boolean verbose,
                          InetSocketAddress metrics, boolean metricsInsecure, int sandboxes) {
        this(List.of(Objects.requireNonNull(coordinator, "coordinator")), modelApi, models, apiKey, workerId,
                capacity, requests, options, grace, requestTimeout, checkModelApi, verbose, metrics, metricsInsecure,
                sandboxes);
    }

    /** The first coordinator address. */
    public InetSocketAddress coordinator() {
        return coordinators.get(0);
    }

    /** Settings without sandboxes: no sandbox check at start. */
    public WorkerSettings(InetSocketAddress coordinator, URI modelApi, List<String> models, String apiKey,
                          String workerId, int capacity, int requests, WorkerOptions options, Duration grace,
                          Duration requestTimeout, boolean checkModelApi, boolean verbose,
                          InetSocketAddress metrics, boolean metricsInsecure) {
        this(coordinator, modelApi, models, apiKey, workerId, capacity, requests, options, grace, requestTimeout,
                checkModelApi, verbose, metrics, metricsInsecure, 0);
    }

    /**
     * Settings whose worker keeps as many requests in flight as it holds jobs: one vignette at a
     * time per job, as a worker ran before {@code --requests}.
     */
    public WorkerSettings(InetSocketAddress coordinator, URI modelApi, List<String> models, String apiKey,
                          String workerId, int capacity, WorkerOptions options, Duration grace,
                          Duration requestTimeout, boolean checkModelApi, boolean verbose,
                          InetSocketAddress metrics, boolean metricsInsecure) {
        this(coordinator, modelApi, models, apiKey, workerId, capacity, capacity, options, grace, requestTimeout,
                checkModelApi, verbose, metrics, metricsInsecure);
    }

    /** The model sent with requests of jobs that name none: the first of {@link #models()}, or null. */
    public String model() {
        return models.isEmpty() ? null : models.get(0);
    }

    /** The info line a worker logs when it starts: who, where, what; no secrets. */
    public String startupLine() {
        return "worker " + workerId + " starting: coordinator" + (coordinators.size() == 1 ? " " : "s ") + describe(coordinators)
                + ", model API " + Redaction.url(modelApi.toString())
                + (models.isEmpty() ? ", models: those the API lists" : (models.size() == 1 ? ", model " : ", models ")
                        + String.join(", ", models))
                + ", capacity " + capacity + (capacity == 1 ? " job" : " jobs")
                + ", " + requests + (requests == 1 ? " request" : " requests") + " in flight"
                + ", heartbeat " + Durations.format(options.heartbeatInterval())
                + ", API key " + (apiKey == null ? "none" : "set")
                + ", token " + (options.token() == null ? "none" : "set")
                + (checkModelApi ? "" : ", model API check skipped (--no-model-check)")
                + (metrics == null ? "" : ", metrics on " + Workers.describe(metrics)
                        + (options.token() != null ? " (with the token)" : metricsInsecure ? " (open, --metrics-insecure)"
                        : ""));
    }

    private static String describe(List<InetSocketAddress> addresses) {
        return addresses.stream().map(Workers::describe).collect(java.util.stream.Collectors.joining(", "));
    }

    /** Never prints the API key or the token. */
    @Override
    public String toString() {
        return "WorkerSettings[coordinators=" + describe(coordinators)
                + ", modelApi=" + Redaction.url(modelApi.toString())
                + ", models=" + models
                + ", apiKey=" + (apiKey == null ? "none" : "***")
                + ", workerId=" + workerId
                + ", capacity=" + capacity
                + ", requests=" + requests
                + ", options=" + options
                + ", grace=" + Durations.format(grace)
                + ", requestTimeout=" + (requestTimeout == null ? "default" : Durations.format(requestTimeout))
                + ", checkModelApi=" + checkModelApi
                + ", verbose=" + verbose
                + ", metrics=" + (metrics == null ? "none" : Workers.describe(metrics))
                + ", metricsInsecure=" + metricsInsecure
                + ", sandboxes=" + sandboxes + "]";
    }
}

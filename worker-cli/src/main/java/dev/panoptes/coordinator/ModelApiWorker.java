package dev.panoptes.coordinator;

import dev.panoptes.control.Redaction;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.local.AsyncLocalWorker;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.RequestPermits;
import dev.panoptes.eval.SandboxCalls;
import dev.panoptes.eval.sandbox.Sandboxes;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.eval.http.ModelApiCheck;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;

/**
 * A worker for a run on one machine: the {@link EvalJobRunner} over an {@link HttpModelClient}
 * that a worker process builds from its {@code --model-api} options, without the worker's
 * connection. {@link #check()} asks the model API what the worker's startup check asks;
 * {@link #handle()} is the in-process worker to give {@link CoordinatorRun#withInProcessWorker}.
 * From Java, the {@code eval} command is:
 *
 * <pre>{@code
 * try (ModelApiWorker worker = ModelApiWorker.open(URI.create("http://127.0.0.1:8000/v1"),
 *         System.getenv("OPENAI_API_KEY"), settings.models(), 64, 64, null)) {
 *     if (worker.check().verdict() != ModelApiCheck.Verdict.OK) { ... }
 *     int exit = new CoordinatorRun(settings, out, err, false, "")
 *             .withRateGovernor(false, 0)
 *             .withInProcessWorker(worker.handle())
 *             .run();
 * }
 * }</pre>
 *
 * <p>Thread-safe. The model client's threads are its own ({@code model-client-<n>-*}); close the
 * worker, after the run, to stop them. Never prints the API key.
 */
public final class ModelApiWorker implements AutoCloseable {
    /** The id the in-process worker's answers are stored under. */
    public static final String WORKER_ID = "local";

    private final HttpModelClient client;
    private final List<String> models;
    private final AsyncLocalWorker handle;
    private final SandboxCalls sandboxed;

    private ModelApiWorker(HttpModelClient client, List<String> models, int capacity, int requests, URI modelApi,
                           Sandboxes sandboxes) {
        this.client = client;
        this.models = models;
        this.sandboxed = new SandboxCalls(client, sandboxes);
        this.handle = new AsyncLocalWorker(WORKER_ID, capacity, new LinkedHashSet<>(models),
                Redaction.url(modelApi.toString()).replaceAll("/+$", ""),
                new EvalJobRunner(client, new RequestPermits(requests), sandboxed));
    }

    /**
     * A worker that keeps as many requests in flight as it runs jobs (each job's vignettes one
     * at a time), as {@link #open(URI, String, List, int, int, Duration)} with
     * {@code requests = capacity}.
     */
    public static ModelApiWorker open(URI modelApi, String apiKey, List<String> models, int capacity,
                                      Duration requestTimeout) {
        return open(modelApi, apiKey, models, capacity, capacity, requestTimeout);
    }

    /**
     * Builds the model client, as a worker with these options does: one keep-alive connection per
     * request in flight. Nothing is asked of the API yet.
     *
     * @param modelApi       the base URL of an OpenAI-compatible API, such as {@code http://host:8000/v1}
     * @param apiKey         its key, or null
     * @param models         the models the run asks (and its judge), at least one; jobs that name
     *                       them go to this worker, and the first is the client's default
     * @param capacity       jobs held at once, at least 1
     * @param requests       model API requests kept in flight at once, shared by the jobs held (a
     *                       job's vignettes run concurrently within it), at least 1
     * @param requestTimeout how long one request may take, or null for the client's default
     * @throws IllegalArgumentException when the client refuses a setting (a bad URL, say)
     */
    public static ModelApiWorker open(URI modelApi, String apiKey, List<String> models, int capacity, int requests,
                                      Duration requestTimeout) {
        return open(modelApi, apiKey, models, capacity, requests, requestTimeout, null);
    }

    /**
     * As {@link #open(URI, String, List, int, int, Duration)}, with the sandboxes its vignettes
     * that declare one run in (null for none: such vignettes then fail as this worker's fault).
     * The caller closes {@code sandboxes} after this worker.
     */
    public static ModelApiWorker open(URI modelApi, String apiKey, List<String> models, int capacity, int requests,
                                      Duration requestTimeout, Sandboxes sandboxes) {
        Objects.requireNonNull(modelApi, "modelApi");
        List<String> served = List.copyOf(new LinkedHashSet<>(models));
        if (served.isEmpty()) {
            throw new IllegalArgumentException("a worker for a run needs the run's models");
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        if (requests < 1) {
            throw new IllegalArgumentException("requests in flight must be at least 1, got " + requests);
        }
        HttpModelClient.Builder builder = HttpModelClient.builder(modelApi, served.get(0))
                .apiKey(apiKey)
                .maxConnections(requests);
        if (requestTimeout != null) {
            builder.requestTimeout(requestTimeout);
        }
        return new ModelApiWorker(builder.build(), served, capacity, requests, modelApi, sandboxes);
    }

    /**
     * Asks the model API once whether it answers and serves every model of {@link #open}'s, as a
     * worker does before registering; the result's message is the worker's. A model API that is
     * not up is {@link ModelApiCheck.Verdict#TRANSIENT}: a worker waits for it, a one-machine run
     * need not. Blocks the caller for at most the check's timeout.
     *
     * @throws InterruptedException when the calling thread is interrupted
     */
    public ModelApiCheck.Result check() throws InterruptedException {
        return new ModelApiCheck(client, models).run();
    }

    /**
     * Why this worker refuses jobs for good, as its client found (a model API without prompt
     * log-probabilities for log-likelihood jobs), or null while nothing says it cannot recover.
     * Any thread.
     */
    public String refusesForGood() {
        return client.loglikelihoodRefusal();
    }

    /** The in-process worker: serves {@link #open}'s models at its capacity, on the client's threads. */
    public WorkerHandle handle() {
        return handle;
    }

    /** Stops the worker taking jobs and closes the model client (aborting calls still in flight). */
    @Override
    public void close() {
        handle.close();
        sandboxed.close();
        client.close();
    }

    @Override
    public String toString() {
        return "ModelApiWorker[" + handle + ", " + client + "]";
    }
}

package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.hc.client5.http.ConnectTimeoutException;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Asks a model API, before a worker takes any job, whether it is usable as configured: the base
 * URL leads to an OpenAI-compatible API, the key is accepted and the model is served. A worker
 * whose configuration is wrong would otherwise register and fail every job it is given.
 *
 * <p>How: {@code GET {base}/models} with the client's API key.
 * <ul>
 *   <li>200 with an OpenAI list ({@code data[].id}): {@link Verdict#OK} when the model is listed
 *       (Ollama's implicit {@code :latest} tag counts), else {@link Verdict#FATAL}, naming the
 *       model and up to {@value #MAX_LISTED} of the models served.</li>
 *   <li>401 or 403: {@link Verdict#FATAL}, the key.</li>
 *   <li>5xx: {@link Verdict#TRANSIENT}: the server is there but not ready.</li>
 *   <li>Anything else (404 and 405 from servers that do not list models, a listing that is not
 *       one, other statuses): the endpoint jobs use is probed instead, with
 *       {@code POST {base}/chat/completions} and {@code {"model": m, "messages": []}}, a request
 *       servers reject while validating it, before any model runs. 404 there is
 *       {@link Verdict#FATAL} (a wrong base URL or an unknown model); 401, 403, 405 and redirects
 *       are {@link Verdict#FATAL} too, since every job would fail the same way; any other answer
 *       (2xx, 400, 422, 500...) is {@link Verdict#OK}: the endpoint exists, and a server that
 *       does not list its models is taken at its word.</li>
 * </ul>
 * Without an HTTP answer: a host name that does not resolve or a TLS failure is
 * {@link Verdict#FATAL}; a refused connection, a timeout or any other I/O failure is
 * {@link Verdict#TRANSIENT} (the server may still be starting).
 *
 * When {@code GET {base}/models} answers 404 and the base URL names no version
 * ({@code http://host:8000}), {@code GET {base}/v1/models} is asked too: a list there is
 * {@link Verdict#FATAL} with a line that asks for {@code /v1} ("did you mean ...?") rather than
 * for {@code --model}.
 *
 * <p>Sends at most three requests per {@link #run()} and never retries itself: the caller decides
 * how long to keep asking after {@link Verdict#TRANSIENT}. Never prints the API key. Thread-safe
 * (it holds no state of its own), like the client it borrows its connections, threads, key and
 * base URL from: its requests run on that client's threads, never on the common pool, and the
 * calling thread only waits for them.
 */
public final class ModelApiCheck {
    /** 30 s per request, or the client's request timeout when shorter. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    /** How many served models a {@link Verdict#FATAL} "not served" line names at most. */
    public static final int MAX_LISTED = 10;

    private final HttpModelClient client;
    /** The client's reading of answers and failures, in its words. */
    private final Diagnosis diagnosis;
    private final Duration timeout;
    /** The models the worker was told to serve; empty to serve whatever the API lists. */
    private final List<String> wanted;

    /**
     * A check with the client's base URL, model and key, each request taking at most
     * {@link #DEFAULT_TIMEOUT} or the client's request timeout, whichever is shorter.
     */
    public ModelApiCheck(HttpModelClient client) {
        this(client, shorter(Objects.requireNonNull(client, "client").requestTimeout(), DEFAULT_TIMEOUT));
    }

    /**
     * A check with the client's base URL, model and key.
     *
     * @param timeout how long each of its requests may take; positive
     * @throws IllegalArgumentException when the timeout is not positive
     */
    public ModelApiCheck(HttpModelClient client, Duration timeout) {
        this(client, client.model() == null ? List.of() : List.of(client.model()), timeout);
    }

    /**
     * As {@link #ModelApiCheck(HttpModelClient, List, Duration)}, each request taking at most
     * {@link #DEFAULT_TIMEOUT} or the client's request timeout, whichever is shorter.
     */
    public ModelApiCheck(HttpModelClient client, List<String> models) {
        this(client, models, shorter(Objects.requireNonNull(client, "client").requestTimeout(), DEFAULT_TIMEOUT));
    }

    /**
     * A check that the API serves each of {@code models}, or, when that list is empty, that it
     * lists the models it serves (which the worker then offers).
     *
     * @param timeout how long each of its requests may take; positive
     * @throws IllegalArgumentException when the timeout is not positive
     */
    public ModelApiCheck(HttpModelClient client, List<String> models, Duration timeout) {
        this.client = Objects.requireNonNull(client, "client");
        this.diagnosis = client.diagnosis();
        this.wanted = List.copyOf(models);
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be a positive duration, got " + timeout);
        }
        this.timeout = timeout;
    }

    /**
     * Runs the check once; blocks for at most two requests' timeouts. Any thread.
     *
     * @return the verdict, with one line saying what was found
     * @throws InterruptedException  when the calling thread is interrupted while waiting
     * @throws IllegalStateException when the client is closed
     */
    public Result run() throws InterruptedException {
        if (client.isClosed()) {
            throw new IllegalStateException("model client for " + client.baseUrl() + " is closed");
        }
        URI models = URI.create(client.baseUrl() + "/models");
        Reply listing = exchange("GET", models, null);
        if (listing.failure != null) {
            return withoutAnswer(listing.failure);
        }
        int status = listing.response.status();
        if (status >= 200 && status <= 299) {
            Optional<List<String>> ids = modelIds(listing.response.body());
            if (ids.isPresent() && !ids.get().isEmpty()) {
                return judgeListing(ids.get());
            }
        } else if (status == 401 || status == 403) {
            return fatal(diagnosis.requestFaultText(status, "GET", models, listing.response::header,
                    serverSaid(listing.response)));
        } else if (status >= 500 && status <= 599) {
            return transientResult("the model API at " + client.baseUrl() + " answered GET /models with HTTP " + status
                    + ": " + serverSaid(listing.response));
        }
        if (status == 404) {
            Optional<Result> missingV1 = missingVersion();
            if (missingV1.isPresent()) {
                return missingV1.get();
            }
        }
        String why = status >= 200 && status <= 299 ? "does not list its models" : "answered GET /models with HTTP "
                + status;
        return probeChatCompletions(why);
    }

    /**
     * After a 404 to {@code GET {base}/models}: when the base URL names no API version and
     * {@code GET {base}/v1/models} lists models, the base URL lacks {@code /v1} (vLLM, Ollama, LM
     * Studio and OpenAI all serve under it), and the verdict says so instead of blaming the model.
     * Empty when the base already ends in a version or {@code /v1} lists nothing either.
     */
    private Optional<Result> missingVersion() throws InterruptedException {
        String base = client.baseUrl().toString();
        String path = client.baseUrl().getPath() == null ? "" : client.baseUrl().getPath();
        if (path.matches(".*/v\\d+/?") || client.baseUrl().getRawQuery() != null) {
            return Optional.empty();
        }
        String withV1 = (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + "/v1";
        Reply listing = exchange("GET", URI.create(withV1 + "/models"), null);
        if (listing.failure != null || listing.response.status() < 200 || listing.response.status() > 299) {
            return Optional.empty();
        }
        Optional<List<String>> ids = modelIds(listing.response.body());
        if (ids.isEmpty() || ids.get().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(fatal("the model API at " + base + " answered HTTP 404 to GET " + base + "/models, but "
                + withV1 + "/models lists " + quoted(ids.get()) + ": --model-api is the API's base URL, the part"
                + " before /chat/completions; did you mean --model-api " + withV1 + "?"));
    }

    /** The answer to a POST the server rejects without running the model. */
    private Result probeChatCompletions(String listingProblem) throws InterruptedException {
        if (wanted.isEmpty()) {
            return fatal("the model API at " + client.baseUrl() + " " + listingProblem + ", so this worker cannot"
                    + " tell which models it serves; name them with --model");
        }
        String model = wanted.get(0);
        ObjectNode body = client.mapper().createObjectNode();
        body.put("model", model);
        body.putArray("messages");
        // Should a server run an empty conversation anyway, one token is all it costs.
        body.put("max_tokens", 1);
        body.put("stream", false);
        Reply probe = exchange("POST", client.endpoint(), body.toString().getBytes(StandardCharsets.UTF_8));
        if (probe.failure != null) {
            return withoutAnswer(probe.failure);
        }
        int status = probe.response.status();
        if (status == 404) {
            return fatal("the model API at " + client.baseUrl() + " answered HTTP 404 to POST " + client.endpoint()
                    + " for model '" + model + "': " + serverSaid(probe.response) + "; either --model-api is"
                    + " not the API's base URL (the part before /chat/completions, such as http://localhost:8000/v1)"
                    + " or the server does not serve model '" + model + "' (check --model)");
        }
        if (status == 401 || status == 403 || status == 405 || (status >= 300 && status <= 399)) {
            return fatal(diagnosis.workerFaultText(status, model, probe.response::header, serverSaid(probe.response)));
        }
        return new Result(Verdict.OK, "model API at " + client.baseUrl() + " " + listingProblem + "; its chat"
                + " completions endpoint answered a probe with HTTP " + status + ", so " + (wanted.size() == 1 ? "model "
                : "models ") + quoted(wanted) + (wanted.size() == 1 ? " is" : " are") + " taken on trust", wanted);
    }

    private Result judgeListing(List<String> ids) {
        if (wanted.isEmpty()) {
            return new Result(Verdict.OK, "model API at " + client.baseUrl() + " serves " + quoted(ids)
                    + "; offering " + (ids.size() == 1 ? "it" : "them all") + " to the coordinator", ids);
        }
        List<String> missing = new ArrayList<>();
        for (String model : wanted) {
            // Ollama serves "llama3" as "llama3:latest" and lists only the latter.
            if (!ids.contains(model) && !(model.indexOf(':') < 0 && ids.contains(model + ":latest"))) {
                missing.add(model);
            }
        }
        if (missing.isEmpty()) {
            return new Result(Verdict.OK, "model API at " + client.baseUrl() + " serves " + quoted(wanted), wanted);
        }
        List<String> shown = ids.subList(0, Math.min(ids.size(), MAX_LISTED));
        String more = ids.size() > shown.size() ? " and " + (ids.size() - shown.size()) + " more" : "";
        return fatal("the model API at " + client.baseUrl() + " does not serve " + (missing.size() == 1 ? "model "
                : "models ") + quoted(missing) + "; it serves " + String.join(", ", shown) + more + "; check --model");
    }

    /** 'a', 'b' */
    private static String quoted(List<String> models) {
        List<String> q = new ArrayList<>(models.size());
        for (String m : models.subList(0, Math.min(models.size(), MAX_LISTED))) {
            q.add("'" + m + "'");
        }
        return String.join(", ", q) + (models.size() > MAX_LISTED ? " and " + (models.size() - MAX_LISTED) + " more"
                : "");
    }

    /** DNS and TLS failures are the configuration's; anything else may pass. */
    private Result withoutAnswer(Throwable failure) {
        if (Retries.isDnsFailure(failure) || Retries.isTlsFailure(failure)) {
            return fatal(diagnosis.transportText(failure, timeout));
        }
        if (failure instanceof ConnectTimeoutException) {
            return transientResult("the model API at " + client.baseUrl() + ": " + diagnosis.transportText(failure, timeout));
        }
        if (failure instanceof TimeoutException) {
            return transientResult("the model API at " + client.baseUrl() + " did not answer within "
                    + Texts.duration(timeout));
        }
        return transientResult(diagnosis.transportText(failure, timeout));
    }

    /** The ids of an OpenAI model list, {@code {"data": [{"id": ...}, ...]}}, or empty when it is not one. */
    private Optional<List<String>> modelIds(String body) {
        JsonNode root;
        try {
            root = client.mapper().readTree(body == null ? "" : body);
        } catch (IOException e) {
            return Optional.empty();
        }
        JsonNode data = root == null ? null : root.get("data");
        if (data == null || !data.isArray()) {
            return Optional.empty();
        }
        List<String> ids = new ArrayList<>(data.size());
        for (JsonNode entry : data) {
            JsonNode id = entry.get("id");
            if (id == null || !id.isTextual()) {
                return Optional.empty();
            }
            ids.add(id.asText());
        }
        return Optional.of(ids);
    }

    private String serverSaid(Answer response) {
        return Diagnosis.serverSaid(ApiError.parse(client.mapper(), response.body()), response.body());
    }

    /**
     * One request on the client's connections, waited for: its answer, or what it failed with (a
     * {@link TimeoutException} when the timeout passed).
     */
    private Reply exchange(String method, URI uri, byte[] body) throws InterruptedException {
        CompletableFuture<Answer> future = client.send(method, uri, body, timeout);
        try {
            // The exchange ends itself at the timeout; the margin only guards against a client
            // closed under it.
            return new Reply(future.get(timeout.toNanos() + TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS), null);
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (TimeoutException e) {
            future.cancel(true);
            return new Reply(null, e);
        } catch (ExecutionException e) {
            return new Reply(null, e.getCause() == null ? e : e.getCause());
        }
    }

    private Result fatal(String line) {
        return new Result(Verdict.FATAL, diagnosis.redact(line));
    }

    private Result transientResult(String line) {
        return new Result(Verdict.TRANSIENT, diagnosis.redact(line));
    }

    private static Duration shorter(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public String toString() {
        return "ModelApiCheck[" + client.baseUrl() + ", model " + client.model() + ", timeout " + timeout + "]";
    }

    /** One exchange: a response, or what the exchange failed with. */
    private record Reply(Answer response, Throwable failure) {
    }

    /** What the check concluded. */
    public enum Verdict {
        /** The model API serves the model, or at least has the endpoint jobs use: go on. */
        OK,
        /**
         * The model API is unusable as configured (wrong base URL, key or model name, DNS or
         * TLS failure): every job would fail until the operator changes the configuration.
         */
        FATAL,
        /** The model API cannot tell yet (refused, timed out, 5xx): ask again later. */
        TRANSIENT
    }

    /**
     * The verdict and one line for a human: what was asked, what answered, what to check. Never
     * contains the API key.
     *
     * @param verdict what to do next
     * @param message one line, without a trailing period
     * @param models  for an OK, the models the worker serves (those it was told, or all the API
     *                lists when it was told none); empty otherwise
     */
    public record Result(Verdict verdict, String message, List<String> models) {
        /** @throws NullPointerException when the verdict or message is null */
        public Result {
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(message, "message");
            models = models == null ? List.of() : List.copyOf(models);
        }

        /** A verdict that names no models (anything but an OK). */
        public Result(Verdict verdict, String message) {
            this(verdict, message, List.of());
        }
    }
}

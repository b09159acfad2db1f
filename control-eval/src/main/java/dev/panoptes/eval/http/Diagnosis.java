package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.FailureScope;
import dev.panoptes.eval.ModelResponse;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.client5.http.HttpHostConnectException;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * What an attempt ended with, in the client's words: a chat completion read from a 2xx, or an
 * {@link AttemptFailure} that says whose fault the failure is ({@link Retries} decides) and, for
 * the worker's faults, what to check, naming this client's base URL and the model or the request
 * asked. Also masks the API key wherever a server echoes it. Immutable and thread-safe; shared by the calls and the
 * {@link ModelApiCheck} of one client.
 */
final class Diagnosis {
    private final URI baseUrl;
    private final String apiKey;
    private final Duration connectTimeout;
    private final ObjectMapper mapper;
    private final ChatCompletions codec;

    Diagnosis(URI baseUrl, String apiKey, Duration connectTimeout, ObjectMapper mapper,
              ChatCompletions codec) {
        this.baseUrl = baseUrl;
        this.apiKey = apiKey;
        this.connectTimeout = connectTimeout;
        this.mapper = mapper;
        this.codec = codec;
    }

    /** Reads a 2xx answer's body, or says what is wrong with it and whose fault that is. */
    @FunctionalInterface
    interface BodyReader {
        ModelResponse read(Answer answer) throws ChatCompletions.BadResponse;
    }

    /** The answer to a 2xx, or why the attempt failed and whether another may help. */
    ModelResponse answer(Answer response, String model) throws AttemptFailure {
        return answer(response, model, null);
    }

    /**
     * As {@link #answer(Answer, String)}, the 2xx body read by {@code reader} (null for a chat
     * completion's).
     */
    ModelResponse answer(Answer response, String model, BodyReader reader) throws AttemptFailure {
        int status = response.status();
        if (status >= 200 && status <= 299) {
            try {
                // Parsed from the body's bytes: a 2xx body becomes text only for a message about it.
                return reader != null ? reader.read(response) : codec.parseResponse(response);
            } catch (ChatCompletions.BadResponse e) {
                if (e.scope() == FailureScope.WORKER) {
                    throw new AttemptFailure(FailureScope.WORKER, "the model API at " + baseUrl + " answered HTTP "
                            + status + " for model '" + model + "' but " + e.getMessage() + "; check that --model-api"
                            + " is the base URL of an OpenAI-compatible API (the part before /chat/completions)",
                            null, null);
                }
                Duration retryAfter = e.scope() == FailureScope.TRANSIENT ? retryAfter(response) : null;
                throw new AttemptFailure(e.scope(), "HTTP " + status + " but " + e.getMessage(), null, retryAfter);
            }
        }
        String body = response.body();
        Optional<ApiError> error = ApiError.parse(mapper, body);
        FailureScope scope = Retries.scopeOf(status, error.orElse(null));
        if (scope == FailureScope.WORKER) {
            throw new AttemptFailure(scope, workerFaultText(status, model, response::header, serverSaid(error, body)), null,
                    null);
        }
        String description = "HTTP " + status + ": " + serverSaid(error, body);
        throw new AttemptFailure(scope, description, null, scope == FailureScope.TRANSIENT ? retryAfter(response) : null);
    }

    /** The server's own error message, from its error envelope or else an excerpt of the body. */
    static String serverSaid(Optional<ApiError> error, String body) {
        return error.map(ApiError::describe).orElseGet(() -> "body: " + Texts.excerpt(body, 200));
    }

    /**
     * What an answer whose status is the worker's fault ({@link Retries#scopeOf}) means, as one
     * sentence naming the API, the status, the model asked for (none when null) and the server's
     * message, and saying what to check. Not redacted: callers redact.
     *
     * @param headers the answer's headers by name (case-insensitive), for a redirect's location
     */
    String workerFaultText(int status, String model, Function<String, Optional<String>> headers, String serverSaid) {
        // A call without a model (none configured) is named by what it asked, never as model 'null'.
        return faultText(status, model == null ? "" : " for model '" + model + "'", headers, serverSaid);
    }

    /**
     * As {@link #workerFaultText(int, String, Function, String)}, for a request that names no model
     * (the model listing): the sentence names the request instead, {@code "to GET <url>"}.
     */
    String requestFaultText(int status, String method, URI uri, Function<String, Optional<String>> headers,
                            String serverSaid) {
        return faultText(status, " to " + method + " " + uri, headers, serverSaid);
    }

    /** The sentence of {@link #workerFaultText}, {@code asked} saying what was asked (" for model 'm'"). */
    private String faultText(int status, String asked, Function<String, Optional<String>> headers, String serverSaid) {
        String at = "the model API at " + baseUrl;
        if (status >= 300 && status <= 399) {
            String location = headers.apply("location").map(l -> " to " + l).orElse("");
            return at + " answered HTTP " + status + ", a redirect" + location + "; redirects are not followed:"
                    + " check --model-api (http or https, host, path)";
        }
        String answered = at + " answered HTTP " + status + asked + ": " + serverSaid + "; ";
        switch (status) {
            case 401:
                return answered + "check the API key (--api-key or OPENAI_API_KEY)";
            case 403:
                return answered + "the API key may not use this model or endpoint: check --api-key and --model";
            case 404:
                return answered + "check --model-api and --model";
            case 405:
                return answered + "check --model-api: it must be the API's base URL, the part before"
                        + " /chat/completions (such as http://localhost:8000/v1)";
            case 429:
                return answered + "the account behind this worker's API key is out of quota or credit";
            default:
                return answered + "the server does not answer as an OpenAI-compatible API would: check --model-api";
        }
    }

    private static Duration retryAfter(Answer response) {
        return Retries.retryAfter(response::header, Instant.now()).orElse(null);
    }

    /** Why an attempt that got no HTTP answer failed, and whether to try again here. */
    AttemptFailure transportFailure(Throwable cause, Duration timeout) {
        FailureScope scope = Retries.transportScope(cause);
        String description = transportText(cause, timeout);
        if (scope == FailureScope.WORKER || cause instanceof IOException) {
            return new AttemptFailure(scope, description, cause, null);
        }
        // Not an I/O failure: a fault in the HTTP stack. The coordinator may try the job again,
        // but repeating it here is pointless.
        return new AttemptFailure(FailureScope.TRANSIENT, false, description, cause, null);
    }

    /**
     * What an exchange that got no HTTP answer failed with, as text for a message: for the
     * worker's faults ({@link Retries#transportScope}) a sentence saying what to check. Not
     * redacted: callers redact.
     *
     * @param timeout the attempt's timeout, for the message
     */
    String transportText(Throwable cause, Duration timeout) {
        String address = hostPort();
        if (Retries.isDnsFailure(cause)) {
            return "cannot resolve the host name '" + baseUrl.getHost() + "' of the model API at " + baseUrl
                    + "; check --model-api";
        }
        if (Retries.isTlsFailure(cause)) {
            return "TLS with the model API at " + address + " failed (" + rootMessage(cause) + "); check --model-api"
                    + " (http or https?) and the server's certificate";
        }
        if (cause instanceof ConnectTimeoutException) {
            return "connecting to " + address + " timed out after " + Texts.duration(connectTimeout);
        }
        if (cause instanceof TimeoutException || cause instanceof SocketTimeoutException) {
            return "request timed out after " + Texts.duration(timeout);
        }
        if (Retries.inChain(cause, ConnectException.class) != null) {
            String why = innermostMessage(cause);
            // Apache HttpClient says "Connect to http://host:port [/address] failed: Connection
            // refused"; the address is in the sentence already.
            int failed = why == null ? -1 : why.lastIndexOf("failed: ");
            if (failed >= 0 && Retries.inChain(cause, HttpHostConnectException.class) != null) {
                why = why.substring(failed + "failed: ".length());
            }
            return "cannot connect to the model API at " + address + " (" + (why == null ? "Connection refused" : why)
                    + "); is the model server running?";
        }
        if (cause instanceof IOException) {
            return "I/O error talking to " + address + " (" + rootMessage(cause) + ")";
        }
        return "unexpected failure talking to " + address + " (" + rootMessage(cause) + ")";
    }

    /** {@code host:port} of the model API, with the scheme's default port when the URL has none. */
    String hostPort() {
        int port = baseUrl.getPort() >= 0 ? baseUrl.getPort() : "https".equals(baseUrl.getScheme()) ? 443 : 80;
        return baseUrl.getHost() + ":" + port;
    }

    /** The innermost non-blank message of a failure and its causes, or null when none has one. */
    private static String innermostMessage(Throwable t) {
        String message = null;
        int depth = 0;
        for (Throwable c = t; c != null && depth < 32; c = c.getCause(), depth++) {
            if (c.getMessage() != null && !c.getMessage().isBlank()) {
                message = Texts.excerpt(c.getMessage(), 200);
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return message;
    }

    /** The class and the innermost non-empty message of a failure and its causes. */
    private static String rootMessage(Throwable t) {
        String message = null;
        Throwable innermost = t;
        for (Throwable c = t; c != null; c = c.getCause()) {
            innermost = c;
            if (c.getMessage() != null && !c.getMessage().isBlank()) {
                message = c.getMessage();
            }
            if (c.getCause() == c) {
                break;
            }
        }
        String name = innermost.getClass().getSimpleName();
        return message == null ? name : name + ": " + Texts.excerpt(message, 200);
    }

    /** Masks the API key wherever it appears (a server may echo it in an error message). */
    String redact(String text) {
        return apiKey == null || text == null ? text : text.replace(apiKey, Texts.MASK);
    }
}

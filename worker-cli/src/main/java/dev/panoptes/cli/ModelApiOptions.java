package dev.panoptes.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

/**
 * The model API a worker calls, as the worker and {@code eval} (a run with its worker in process)
 * both take it: {@code --model-api}, {@code --api-key} (or {@value WorkerMain#API_KEY_ENV}), requests
 * in flight and jobs at once, the request timeout and the startup check. Filled in by picocli; read on the command's
 * thread. The key is never printed, not even in an error about it.
 */
final class ModelApiOptions {
    @Option(names = "--model-api", order = 20, paramLabel = "URL", converter = HttpUrlConverter.class,
            description = "Base URL of an OpenAI-compatible API, e.g. http://localhost:8000/v1. Required.")
    URI modelApi;

    @Option(names = "--api-key", order = 40, paramLabel = "KEY",
            description = "The model API's key. Default: the " + WorkerMain.API_KEY_ENV + " environment variable."
                    + " Never printed.")
    String apiKey;

    /** Sized for a batching server (vLLM batches best at 64 to 256 sequences); a hosted API's rate limit may want less. */
    static final int DEFAULT_REQUESTS = 64;

    @Option(names = "--requests", order = 55, paramLabel = "N", defaultValue = "" + DEFAULT_REQUESTS,
            converter = RequestsConverter.class,
            description = "How many model API requests to keep in flight at once (1 to " + RequestsConverter.MAX
                    + "), shared by all the jobs this worker holds; a job's vignettes run concurrently within"
                    + " it. Default: ${DEFAULT-VALUE}, for a batching server such as vLLM.")
    int requests;

    @Option(names = "--capacity", order = 60, paramLabel = "N", converter = CapacityConverter.class,
            description = "How many jobs to hold at once (1 to " + CapacityConverter.MAX + "). Default: as many"
                    + " as --requests (at most " + CapacityConverter.MAX + "), so that even jobs of one vignette"
                    + " fill the requests; jobs beyond what the requests serve wait their turn in the worker.")
    Integer capacity;

    @Option(names = "--request-timeout", order = 110, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long one model API request may take. Default: the HTTP client's own.")
    Duration requestTimeout;

    @Option(names = "--no-model-check", order = 120,
            description = "Skip the check of the model API before starting work (for a server that the"
                    + " check misjudges). Without the check, a wrong URL, key or model fails every job instead.")
    boolean noModelCheck;

    /**
     * The jobs held at once: {@code --capacity}, else one per request in flight (capped at
     * {@value CapacityConverter#MAX}). Each job keeps at least one request open while it runs, so
     * fewer jobs than requests would leave the budget unfilled when jobs are small; more would
     * only queue at the worker while other workers could take them.
     */
    int capacity() {
        return capacity != null ? capacity : Math.min(requests, CapacityConverter.MAX);
    }

    /**
     * The API key: {@code --api-key}, else {@value WorkerMain#API_KEY_ENV} from {@code env}; null
     * when neither is set.
     *
     * @throws ParameterException when the key holds a character an HTTP header cannot carry (the
     *                            key itself is not repeated)
     */
    String apiKey(CommandSpec spec, Map<String, String> env) {
        String key = WorkerMain.firstSet(apiKey, env.get(WorkerMain.API_KEY_ENV));
        if (key == null) {
            return null;
        }
        String source = WorkerMain.firstSet(apiKey, null) != null
                ? "option '--api-key'" : "environment variable " + WorkerMain.API_KEY_ENV;
        String stripped = key.strip();
        for (int i = 0; i < stripped.length(); i++) {
            char c = stripped.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                throw new ParameterException(spec.commandLine(), "Invalid value for " + source
                        + ": an API key must be printable ASCII without spaces; character " + (i + 1)
                        + " is not (the key itself is not printed)");
            }
        }
        return key;
    }
}

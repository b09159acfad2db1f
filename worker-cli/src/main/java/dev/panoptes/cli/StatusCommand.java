package dev.panoptes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.admin.StatusTable;
import dev.panoptes.admin.StatusView;
import dev.panoptes.console.Durations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar status --coordinator-admin HOST:PORT}: asks a running coordinator's
 * admin endpoint ({@code coordinator --metrics HOST:PORT}) for {@code GET /status} and prints
 * the run and its workers as tables. One synchronous request on the JDK's HTTP client.
 */
@Command(name = "status",
        sortOptions = false,
        usageHelpWidth = 100,
        mixinStandardHelpOptions = true,
        description = {
            "Prints what a running coordinator is doing: the run (jobs done, failed, in flight, answers stored,"
                    + " elapsed, ETA) and one row per connected worker (capacity, jobs in flight and queued,"
                    + " completed, failures, quarantine, heartbeat age, models).",
            "Asks the coordinator's admin endpoint, the address of its --metrics option, for GET /status."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:printed the status",
            "1:the admin endpoint is unreachable (nothing listens there, or it did not answer in time)",
            "2:invalid command line, or the token is missing or wrong (HTTP 401)",
            "3:the endpoint answered something other than a status view (another HTTP status, or not JSON)"
        },
        footerHeading = "%nExample:%n",
        footer = {"  java -jar worker.jar status --coordinator-admin 127.0.0.1:9464 --token \"$PANOPTES_TOKEN\""})
public final class StatusCommand implements Callable<Integer> {
    public static final int EXIT_UNREACHABLE = 1;
    public static final int EXIT_UNAUTHORIZED = 2;
    public static final int EXIT_NOT_A_STATUS = 3;
    /**
     * Jackson's mapper, built on first use rather than with this class, which the whole command
     * tree loads: building it loads much of Jackson (~150 ms of CPU).
     */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper()
                .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    }

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Option(names = "--coordinator-admin", order = 10, paramLabel = "HOST:PORT", required = true,
            converter = HostPortConverter.class,
            description = "The coordinator's admin endpoint (its --metrics address). Required.")
    private InetSocketAddress admin;

    @Option(names = "--token", order = 20, paramLabel = "TOKEN",
            description = "The coordinator's token. Default: the " + WorkerMain.TOKEN_ENV + " environment variable."
                    + " Never printed.")
    private String token;

    @Option(names = "--timeout", order = 30, paramLabel = "DURATION", defaultValue = "5s",
            converter = DurationConverter.class,
            description = "How long to wait for the coordinator to answer. Default: ${DEFAULT-VALUE}.")
    private Duration timeout;

    @Option(names = "--json", order = 40, description = "Print the status view's JSON as the coordinator sent it.")
    private boolean json;

    private final Map<String, String> env;

    StatusCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    @Override
    public Integer call() throws InterruptedException {
        verbose.apply();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String where = "http://" + hostForUrl(admin) + ":" + admin.getPort() + "/status";
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(where)).timeout(timeout).GET();
        String secret = token != null && !token.isBlank() ? token : env.get(WorkerMain.TOKEN_ENV);
        if (secret != null && !secret.isBlank()) {
            request.header("Authorization", "Bearer " + secret.strip());
        }
        HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
        HttpResponse<String> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (HttpConnectTimeoutException e) {
            return fail(err, EXIT_UNREACHABLE, "cannot reach the coordinator's admin endpoint " + where + ": no"
                    + " connection within " + Durations.format(timeout) + "; is the address right?", e);
        } catch (HttpTimeoutException e) {
            return fail(err, EXIT_UNREACHABLE, "the coordinator's admin endpoint " + where + " did not answer within "
                    + Durations.format(timeout) + " (--timeout)", e);
        } catch (ConnectException e) {
            return fail(err, EXIT_UNREACHABLE, "cannot reach the coordinator's admin endpoint " + where + ": connection"
                    + " refused; is the coordinator running with --metrics " + admin.getHostString() + ":"
                    + admin.getPort() + "?", e);
        } catch (IOException e) {
            return fail(err, EXIT_UNREACHABLE, "cannot reach the coordinator's admin endpoint " + where + ": "
                    + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        }
        if (response.statusCode() == 401) {
            return fail(err, EXIT_UNAUTHORIZED, "the coordinator refused the status view (HTTP 401): "
                    + (secret == null || secret.isBlank()
                            ? "it needs its token; pass --token or set " + WorkerMain.TOKEN_ENV
                            : "the token is wrong (it was not printed)"), null);
        }
        if (response.statusCode() != 200) {
            return fail(err, EXIT_NOT_A_STATUS, "the admin endpoint " + where + " answered HTTP " + response.statusCode()
                    + " instead of a status view: " + excerpt(response.body()), null);
        }
        StatusView view;
        try {
            view = Json.MAPPER.readValue(response.body(), StatusView.class);
        } catch (JsonProcessingException e) {
            return fail(err, EXIT_NOT_A_STATUS, "the admin endpoint " + where + " answered something that is not a"
                    + " status view (" + e.getOriginalMessage() + "): " + excerpt(response.body())
                    + "; is this a Panoptes coordinator's --metrics address?", e);
        }
        if (view.run() == null) {
            return fail(err, EXIT_NOT_A_STATUS, "the admin endpoint " + where + " answered JSON without a run: "
                    + excerpt(response.body()), null);
        }
        out.print(json ? response.body() + System.lineSeparator() : StatusTable.render(view));
        out.flush();
        return 0;
    }

    private int fail(PrintWriter err, int code, String message, Exception cause) {
        err.println(message);
        if (cause != null && verbose.isVerbose()) {
            cause.printStackTrace(err);
        }
        err.flush();
        return code;
    }

    private static String excerpt(String body) {
        String oneLine = body == null ? "" : body.strip().replaceAll("\\s+", " ");
        return oneLine.isEmpty() ? "(empty body)" : "'" + (oneLine.length() > 80 ? oneLine.substring(0, 80) + "..." : oneLine)
                + "'";
    }

    private static String hostForUrl(InetSocketAddress address) {
        String host = address.getHostString();
        return host.contains(":") ? "[" + host + "]" : host;
    }
}

package dev.panoptes.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A model API whose chat completions a test scripts, on a loopback ephemeral port for each test
 * of a class that registers it ({@code @RegisterExtension final ScriptedModelApi api = new
 * ScriptedModelApi(this::complete)}): it lists one model, {@code m}, and hands every
 * {@code POST /v1/chat/completions} to the test's handler, for failures the stub model does not
 * play (a 503 for ever, a refusal until told to stop).
 */
final class ScriptedModelApi implements BeforeEachCallback, AfterEachCallback {
    private final HttpHandler completions;
    private ExecutorService threads;
    private HttpServer server;

    ScriptedModelApi(HttpHandler completions) {
        this.completions = completions;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        threads = Executors.newCachedThreadPool();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/models", exchange -> send(exchange, 200,
                "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\"}]}"));
        server.createContext("/v1/chat/completions", completions);
        server.setExecutor(threads);
        server.start();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        server.stop(0);
        threads.shutdownNow();
    }

    /** The API's base URL, for {@code --model-api}. */
    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    /** Answers with {@code status} and a JSON body, and ends the exchange. */
    static void send(HttpExchange exchange, int status, String json) throws IOException {
        try (exchange) {
            byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }
}

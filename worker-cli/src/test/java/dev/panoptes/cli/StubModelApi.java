package dev.panoptes.cli;

import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;

/**
 * The stub model API on a loopback ephemeral port for each test of a class that registers this
 * ({@code @RegisterExtension final StubModelApi stub = new StubModelApi(latency, threads)}):
 * started before each test, closed after it, so no test sees another's requests.
 */
final class StubModelApi implements BeforeEachCallback, AfterEachCallback {
    private final Duration latency;
    private final int threads;
    private StubModelServer server;

    StubModelApi(Duration latency, int threads) {
        this.latency = latency;
        this.threads = threads;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        server = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), latency, threads);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        server.close();
    }

    /** The API's base URL, for {@code --model-api}. */
    URI baseUrl() {
        return server.baseUrl();
    }

    /**
     * Runs {@code eval ARGS --model <the stub's model> --model-api <this API>} in process, as a
     * user types it against this stub.
     */
    EvalRun eval(String... args) {
        String[] all = new String[args.length + 4];
        all[0] = "eval";
        System.arraycopy(args, 0, all, 1, args.length);
        all[args.length + 1] = "--model";
        all[args.length + 2] = StubModelServer.MODEL;
        all[args.length + 3] = "--model-api=" + baseUrl();
        return EvalRun.of(all);
    }

    /** Whether the API returns prompt log-probabilities (a llama.cpp server does not); true by default. */
    void servePromptLogprobs(boolean serve) {
        server.servePromptLogprobs(serve);
    }

    /** The completions the API has answered in this test so far. */
    long requestCount() {
        return server.requestCount();
    }
}

package dev.panoptes.eval.http;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.SpecParams;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.http.FakeOpenAiServer.Recorded;
import org.junit.jupiter.api.AfterEach;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the tests of {@link HttpModelClient} share: a fake model API per test, the clients a test
 * built (closed after it), and fast timeouts. The tests are two classes,
 * {@link HttpModelClientTest} and {@link HttpModelClientConnectionsTest}, so that surefire's two
 * test JVMs run them at once: as one class (some 22 s, a third of the module's test time, most of
 * it waiting on real timeouts) it alone decided when the module's tests ended.
 */
abstract class HttpModelClientFixture {
    static final String MODEL = "gpt-test";

    final FakeOpenAiServer server = new FakeOpenAiServer();
    final List<HttpModelClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown() {
        clients.forEach(HttpModelClient::close);
        server.close();
    }

    /** Small timeouts and a tiny backoff so that retries cost milliseconds. */
    HttpModelClient.Builder fast(URI baseUrl) {
        return HttpModelClient.builder(baseUrl, MODEL)
                .connectTimeout(Duration.ofSeconds(2))
                .requestTimeout(Duration.ofSeconds(5))
                .maxAttempts(4)
                .retryBudget(Duration.ofSeconds(20))
                .backoffBase(Duration.ofMillis(1))
                .backoffCap(Duration.ofMillis(5));
    }

    HttpModelClient.Builder fast() {
        return fast(server.baseUrl());
    }

    HttpModelClient build(HttpModelClient.Builder builder) {
        HttpModelClient c = builder.build();
        clients.add(c);
        return c;
    }

    static ModelRequest prompt(String text) {
        return new ModelRequest(text, SpecParams.NONE);
    }

    static void assertScope(Throwable thrown, FailureScope scope) {
        assertThat(thrown).isInstanceOf(ControlException.class);
        assertThat(((ControlException) thrown).scope()).as("scope of %s", thrown).isEqualTo(scope);
    }

    static long millisBetween(Recorded a, Recorded b) {
        return TimeUnit.NANOSECONDS.toMillis(b.receivedNanos() - a.receivedNanos());
    }
}

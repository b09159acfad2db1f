package dev.panoptes.eval.http;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.http.FakeOpenAiServer.Recorded;
import dev.panoptes.eval.http.FakeOpenAiServer.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The client asks the JVM's proxy settings once per endpoint (ProxyRoutes), yet every change to
 * them still takes effect at the next request, as when it asked at every request: a fake server
 * plays the proxy, sent the absolute URL of a host that does not exist, which only the proxy
 * could reach; a request that goes direct fails to resolve that host.
 */
class ProxyRoutesTest {
    private static final URI UNREACHABLE = URI.create("http://model-api.invalid:8000/v1");

    private final FakeOpenAiServer proxy = new FakeOpenAiServer();
    private final List<HttpModelClient> clients = new ArrayList<>();
    private final String[] saved = new String[ProxyRoutes.PROXY_PROPERTIES.length];
    private ProxySelector savedSelector;

    @BeforeEach
    void save() {
        for (int i = 0; i < saved.length; i++) {
            saved[i] = System.getProperty(ProxyRoutes.PROXY_PROPERTIES[i]);
        }
        savedSelector = ProxySelector.getDefault();
        proxy.otherwise(Reply.ok("via the proxy"));
    }

    @AfterEach
    void restore() {
        clients.forEach(HttpModelClient::close);
        proxy.close();
        ProxySelector.setDefault(savedSelector);
        for (int i = 0; i < saved.length; i++) {
            if (saved[i] == null) {
                System.clearProperty(ProxyRoutes.PROXY_PROPERTIES[i]);
            } else {
                System.setProperty(ProxyRoutes.PROXY_PROPERTIES[i], saved[i]);
            }
        }
    }

    private HttpModelClient client(URI baseUrl) {
        HttpModelClient c = HttpModelClient.builder(baseUrl, "gpt-test")
                .connectTimeout(Duration.ofSeconds(2))
                .requestTimeout(Duration.ofSeconds(5))
                .maxAttempts(1)
                .build();
        clients.add(c);
        return c;
    }

    private static ModelRequest prompt(String text) {
        return new ModelRequest(text, SpecParams.NONE);
    }

    private void proxyAt(FakeOpenAiServer server) {
        System.setProperty("http.proxyHost", "127.0.0.1");
        System.setProperty("http.proxyPort", Integer.toString(server.port()));
        System.setProperty("http.nonProxyHosts", "none.invalid");
    }

    private static void assertWentDirect(HttpModelClient client) {
        Throwable thrown = catchThrowable(() -> client.complete(prompt("direct")));
        assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                .hasMessageStartingWith("cannot resolve the host name 'model-api.invalid'");
    }

    @Test
    void theProxyIsAskedOncePerEndpointWhileThePropertiesStayTheSame() throws Exception {
        proxyAt(proxy);
        HttpModelClient client = client(UNREACHABLE);

        for (int i = 0; i < 3; i++) {
            assertThat(client.complete(prompt("p" + i)).text()).isEqualTo("via the proxy");
        }

        assertThat(proxy.requests()).hasSize(3).extracting(Recorded::target)
                .containsOnly(URI.create("http://model-api.invalid:8000/v1/chat/completions"));
        assertThat(client.proxyDecisionsKept()).isEqualTo(1);
    }

    @Test
    void aNoProxyHostSetAfterTheRouteWasKeptSendsTheNextRequestDirect() throws Exception {
        proxyAt(proxy);
        HttpModelClient client = client(UNREACHABLE);
        assertThat(client.complete(prompt("p")).text()).isEqualTo("via the proxy");

        System.setProperty("http.nonProxyHosts", "*.invalid");
        assertWentDirect(client);

        System.setProperty("http.nonProxyHosts", "none.invalid");
        assertThat(client.complete(prompt("q")).text()).isEqualTo("via the proxy");
        assertThat(proxy.prompts()).containsExactly("p", "q");
    }

    @Test
    void aProxyClearedAfterTheRouteWasKeptSendsTheNextRequestDirect() throws Exception {
        proxyAt(proxy);
        HttpModelClient client = client(UNREACHABLE);
        assertThat(client.complete(prompt("p")).text()).isEqualTo("via the proxy");

        System.clearProperty("http.proxyHost");
        assertWentDirect(client);
        assertThat(proxy.requests()).hasSize(1);
    }

    @Test
    void aProxySetAfterADirectRouteWasKeptCarriesTheNextRequest() throws Exception {
        System.clearProperty("http.proxyHost");
        HttpModelClient client = client(UNREACHABLE);
        assertWentDirect(client);
        assertThat(client.proxyDecisionsKept()).isEqualTo(1);

        proxyAt(proxy);
        assertThat(client.complete(prompt("q")).text()).isEqualTo("via the proxy");
        assertThat(proxy.onlyRequest().target()).isEqualTo(URI.create(UNREACHABLE + "/chat/completions"));
    }

    @Test
    void aProxyPortChangedAfterTheRouteWasKeptIsUsedFromTheNextRequest() throws Exception {
        proxyAt(proxy);
        HttpModelClient client = client(UNREACHABLE);
        assertThat(client.complete(prompt("p")).text()).isEqualTo("via the proxy");

        try (FakeOpenAiServer other = new FakeOpenAiServer()) {
            other.otherwise(Reply.ok("via the other proxy"));
            System.setProperty("http.proxyPort", Integer.toString(other.port()));
            assertThat(client.complete(prompt("q")).text()).isEqualTo("via the other proxy");
            assertThat(other.prompts()).containsExactly("q");
        }
        assertThat(proxy.requests()).hasSize(1);
    }

    @Test
    void aProxySelectorOfTheApplicationsIsAskedAtEveryRequest() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        InetSocketAddress at = new InetSocketAddress("127.0.0.1", proxy.port());
        ProxySelector.setDefault(new ProxySelector() {
            @Override
            public List<Proxy> select(URI uri) {
                asked.incrementAndGet();
                return List.of(new Proxy(Proxy.Type.HTTP, at));
            }

            @Override
            public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {
            }
        });
        HttpModelClient client = client(UNREACHABLE);

        for (int i = 0; i < 3; i++) {
            assertThat(client.complete(prompt("p" + i)).text()).isEqualTo("via the proxy");
        }

        assertThat(asked).hasValue(3);
        assertThat(client.proxyDecisionsKept()).isZero();
    }
}

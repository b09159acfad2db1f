package dev.panoptes.eval.http;

import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecRuntime;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.concurrent.ComplexCancellable;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.ProtocolException;
import org.apache.hc.core5.http.message.BasicHttpRequest;
import org.apache.hc.core5.http.nio.AsyncDataConsumer;
import org.apache.hc.core5.net.URIAuthority;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The protocol step that replaces Apache's: each request goes on as Apache's step would send
 * one that takes no authentication challenge (the whole client's behaviour through a proxy is
 * in ProxyRoutesTest and HttpModelClientConnectionsTest).
 */
class PlainProtocolTest {
    private static final HttpHost API = new HttpHost("http", "model-api.example", 8000);
    private static final HttpHost PROXY = new HttpHost("http", "proxy.example", 3128);

    private final AtomicReference<HttpRequest> proceeded = new AtomicReference<>();
    private final AsyncExecChain chain = (request, entity, scope, callback) -> proceeded.set(request);

    /** A scope of the fields the step reads (the route), the rest only as Apache requires them. */
    private static AsyncExecChain.Scope scope(HttpRoute route, HttpRequest original) {
        AsyncExecRuntime runtime = (AsyncExecRuntime) Proxy.newProxyInstance(PlainProtocolTest.class.getClassLoader(),
                new Class<?>[] {AsyncExecRuntime.class}, (proxy, method, args) -> {
                    throw new AssertionError("the protocol step touched the runtime: " + method.getName());
                });
        return new AsyncExecChain.Scope("ex-1", route, original, new ComplexCancellable(), HttpClientContext.create(),
                runtime, (request, entity, scope, callback, delay) -> {
                    throw new AssertionError("the protocol step scheduled a retry");
                }, new AtomicInteger(1));
    }

    private HttpRequest sent(HttpRequest request, HttpRoute route) throws Exception {
        PlainProtocol.INSTANCE.execute(request, null, scope(route, request), chain, NO_CALLBACK);
        return proceeded.get();
    }

    @Test
    void aDirectRequestGoesOnAsItIsWithItsPathAlone() throws Exception {
        BasicHttpRequest request = new BasicHttpRequest("POST", "http", new URIAuthority("model-api.example", 8000),
                "/v1/chat/completions");

        HttpRequest sent = sent(request, new HttpRoute(API));

        assertThat(sent).isSameAs(request);
        assertThat(sent.getRequestUri()).isEqualTo("/v1/chat/completions");
    }

    @Test
    void aRequestThroughAPlainProxyIsSentWithItsAbsoluteUri() throws Exception {
        BasicHttpRequest request = new BasicHttpRequest("POST", "http", new URIAuthority("model-api.example", 8000),
                "/v1/chat/completions");
        request.addHeader("Accept", "application/json");

        HttpRequest sent = sent(request, new HttpRoute(API, PROXY));

        assertThat(sent.getRequestUri()).isEqualTo("http://model-api.example:8000/v1/chat/completions");
        assertThat(sent.getFirstHeader("Accept").getValue()).isEqualTo("application/json");
        assertThat(request.getRequestUri()).as("the caller's request is left alone").isEqualTo("/v1/chat/completions");
    }

    @Test
    void aRequestThroughATunnelKeepsItsPath() throws Exception {
        HttpHost https = new HttpHost("https", "model-api.example", 443);
        BasicHttpRequest request = new BasicHttpRequest("POST", "https", new URIAuthority("model-api.example", 443),
                "/v1/chat/completions");

        HttpRequest sent = sent(request, new HttpRoute(https, null, PROXY, true));

        assertThat(sent.getRequestUri()).isEqualTo("/v1/chat/completions");
    }

    @Test
    void aRequestWithoutSchemeOrAuthorityTakesTheRoutes() throws Exception {
        BasicHttpRequest request = new BasicHttpRequest("GET", "/v1/models");

        HttpRequest sent = sent(request, new HttpRoute(API));

        assertThat(sent.getScheme()).isEqualTo("http");
        assertThat(sent.getAuthority()).isEqualTo(new URIAuthority("model-api.example", 8000));
    }

    @Test
    void userInfoInTheAuthorityIsRefusedAsApacheRefusesIt() {
        BasicHttpRequest request = new BasicHttpRequest("GET", "http",
                new URIAuthority("user:secret", "model-api.example", 8000), "/v1/models");

        Throwable thrown = catchThrowable(() -> sent(request, new HttpRoute(API)));

        assertThat(thrown).isInstanceOf(ProtocolException.class)
                .hasMessage("Request URI authority contains deprecated userinfo component");
        assertThat(proceeded.get()).isNull();
    }

    private static final AsyncExecCallback NO_CALLBACK = new AsyncExecCallback() {
        @Override
        public AsyncDataConsumer handleResponse(HttpResponse response, EntityDetails entityDetails) {
            throw new AssertionError("not called");
        }

        @Override
        public void handleInformationResponse(HttpResponse response) {
            throw new AssertionError("not called");
        }

        @Override
        public void completed() {
            throw new AssertionError("not called");
        }

        @Override
        public void failed(Exception cause) {
            throw new AssertionError("not called", cause);
        }
    };
}

package dev.panoptes.eval.http;

import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecChainHandler;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.ProtocolException;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.support.BasicRequestBuilder;
import org.apache.hc.core5.net.URIAuthority;

import java.io.IOException;

/**
 * The protocol step of Apache's exec chain for a client that never authenticates: what
 * Apache's own step ({@code AsyncProtocolExec}) does to a request that takes no challenge, and
 * nothing else. A request through a proxy that is not tunnelled (plain http) is sent with its
 * absolute URI; a request lacking a scheme or an authority takes the route's; a URI with
 * user info is refused, in Apache's words.
 *
 * <p>Why not Apache's: with authentication disabled it still takes each request's path apart
 * for an authentication scope ({@code RequestSupport.extractPathPrefix}: a URI builder, path
 * splitting and percent-encoding per request), which cost the worker ~2 % of its CPU per model
 * call and ~0.9 s of its JIT compiler's time over a 20,000-call run, for nothing. The client
 * sends its key itself ({@link AuthorizationHeader}) and leaves 401 and 407 answers to the
 * {@link Diagnosis}, so there is no challenge to answer. Stateless; any thread.
 */
final class PlainProtocol implements AsyncExecChainHandler {
    static final PlainProtocol INSTANCE = new PlainProtocol();

    private PlainProtocol() {
    }

    @Override
    public void execute(HttpRequest request, AsyncEntityProducer entity, AsyncExecChain.Scope scope,
                        AsyncExecChain chain, AsyncExecCallback callback) throws HttpException, IOException {
        HttpRoute route = scope.route;
        HttpHost target = route.getTargetHost();
        HttpRequest sent = request;
        if (route.getProxyHost() != null && !route.isTunnelled()) {
            BasicRequestBuilder builder = BasicRequestBuilder.copy(request);
            if (builder.getAuthority() == null) {
                builder.setAuthority(new URIAuthority(target));
            }
            builder.setAbsoluteRequestUri(true);
            sent = builder.build();
        }
        if (sent.getScheme() == null) {
            sent.setScheme(target.getSchemeName());
        }
        if (sent.getAuthority() == null) {
            sent.setAuthority(new URIAuthority(target));
        }
        if (sent.getAuthority().getUserInfo() != null) {
            throw new ProtocolException("Request URI authority contains deprecated userinfo component");
        }
        chain.proceed(sent, entity, scope, callback);
    }
}

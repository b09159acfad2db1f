package dev.panoptes.eval.http;

import org.apache.hc.client5.http.impl.routing.SystemDefaultRoutePlanner;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.protocol.HttpContext;

import java.io.IOException;
import java.io.InputStream;
import java.net.ProxySelector;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Apache HttpClient's route planner over the JVM's default {@link ProxySelector}, as
 * {@link SystemDefaultRoutePlanner} is, except that it asks the selector once per target host
 * and proxy settings rather than once per request: asking costs a {@link java.net.URI} built
 * and parsed and every proxy property read, about a twentieth of the worker's CPU per model
 * call, to learn what does not change between two calls to the same endpoint.
 *
 * <p>The answer is the selector's own, kept only while it must be the same: when the default
 * selector is the JDK's built-in one, which decides from the proxy system properties alone
 * ({@code http.proxyHost}, {@code http.proxyPort}, {@code https.proxyHost},
 * {@code https.proxyPort}, {@code http.nonProxyHosts}, the {@code socksProxy*} ones and the
 * legacy {@code proxyHost} and {@code proxyPort}), an answer is reused as long as every one of
 * those properties is unchanged, and setting or clearing any of them (or installing another
 * selector) takes effect at the next request, as before. A selector of the application's own
 * ({@link ProxySelector#setDefault}) and the JDK's with {@code java.net.useSystemProxies}
 * (which asks the desktop's settings, which may change under it) are asked at every request.
 *
 * <p>Thread-safe: Apache calls it on the thread that starts an exchange.
 */
final class ProxyRoutes extends SystemDefaultRoutePlanner {
    /**
     * Every property the JDK's built-in selector reads when it selects for an http or https
     * target (see its DefaultProxySelector).
     */
    static final String[] PROXY_PROPERTIES = {
        "http.proxyHost", "http.proxyPort", "https.proxyHost", "https.proxyPort", "http.nonProxyHosts",
        "proxyHost", "proxyPort", "socksProxyHost", "socksProxyPort", "socksProxyVersion", "socksNonProxyHosts"};
    private static final String JDK_SELECTOR = "sun.net.spi.DefaultProxySelector";
    /**
     * Whether the JDK's selector asks the desktop's proxy settings: it reads
     * {@code java.net.useSystemProxies} once, when it is first used, from the system properties
     * or else the JDK's {@code conf/net.properties}.
     */
    private static final boolean SYSTEM_PROXIES = systemProxies();

    /** The proxy, or null for none, of each target asked for, and what it was decided from. */
    private final ConcurrentHashMap<HttpHost, Decided> decided = new ConcurrentHashMap<>();

    ProxyRoutes() {
        super(null);
    }

    @Override
    protected HttpHost determineProxy(HttpHost target, HttpContext context) throws HttpException {
        ProxySelector selector = ProxySelector.getDefault();
        if (selector == null || SYSTEM_PROXIES || !JDK_SELECTOR.equals(selector.getClass().getName())) {
            return super.determineProxy(target, context);
        }
        Decided d = decided.get(target);
        if (d != null && d.selector == selector && d.sameProperties()) {
            return d.proxy;
        }
        // The properties are read before the selector reads them: should one change in between,
        // the next request finds them changed and asks again.
        String[] properties = properties();
        HttpHost proxy = super.determineProxy(target, context);
        decided.put(target, new Decided(selector, properties, proxy));
        return proxy;
    }

    /** How many targets have a proxy decision kept. For tests. */
    int decisionsKept() {
        return decided.size();
    }

    private static String[] properties() {
        String[] values = new String[PROXY_PROPERTIES.length];
        for (int i = 0; i < values.length; i++) {
            values[i] = System.getProperty(PROXY_PROPERTIES[i]);
        }
        return values;
    }

    private static boolean systemProxies() {
        String set = System.getProperty("java.net.useSystemProxies");
        if (set != null) {
            return Boolean.parseBoolean(set);
        }
        Path file = Path.of(System.getProperty("java.home"), "conf", "net.properties");
        Properties net = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            net.load(in);
        } catch (IOException | RuntimeException e) {
            // No such file: the JDK's default, no system proxies.
            return false;
        }
        return Boolean.parseBoolean(net.getProperty("java.net.useSystemProxies"));
    }

    /** A selector's answer for one target, with the properties it was given from. */
    private static final class Decided {
        final ProxySelector selector;
        final String[] properties;
        final HttpHost proxy;

        Decided(ProxySelector selector, String[] properties, HttpHost proxy) {
            this.selector = selector;
            this.properties = properties;
            this.proxy = proxy;
        }

        boolean sameProperties() {
            for (int i = 0; i < properties.length; i++) {
                if (!Objects.equals(properties[i], System.getProperty(PROXY_PROPERTIES[i]))) {
                    return false;
                }
            }
            return true;
        }
    }
}

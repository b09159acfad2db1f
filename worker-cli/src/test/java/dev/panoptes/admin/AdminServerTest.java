package dev.panoptes.admin;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The admin endpoint over real HTTP on loopback: who may read it, and clients that stall. */
@Timeout(60)
class AdminServerTest {
    private static final String TOKEN = "admin-t0ken";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    @Test
    void withATokenMetricsAndStatusBothNeedIt() throws Exception {
        Counter.builder("panoptes.test.things").register(registry).increment(3);
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, () -> "{\"run\":{}}", TOKEN));

        for (String path : List.of("/metrics", "/status")) {
            HttpResponse<String> anonymous = get(admin, path, null);
            assertThat(anonymous.statusCode()).as(path).isEqualTo(401);
            assertThat(anonymous.headers().firstValue("WWW-Authenticate")).as(path).hasValue("Bearer realm=\"panoptes\"");
            assertThat(anonymous.body()).as(path).contains("Authorization: Bearer <token>")
                    .doesNotContain("panoptes_test_things").doesNotContain("{\"run\"");
            assertThat(get(admin, path, "Bearer wrong").statusCode()).as(path).isEqualTo(401);
            assertThat(get(admin, path, TOKEN).statusCode()).as(path + ": the token without 'Bearer '").isEqualTo(401);
            assertThat(get(admin, path, "Bearer " + TOKEN).statusCode()).as(path).isEqualTo(200);
        }
        HttpResponse<String> scrape = get(admin, "/metrics", "Bearer " + TOKEN);
        assertThat(scrape.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(scrape.body()).contains("panoptes_test_things_total 3.0");
        assertThat(get(admin, "/status", "Bearer " + TOKEN).body()).isEqualTo("{\"run\":{}}");
        assertThat(get(admin, "/nothing", null).statusCode()).isEqualTo(404);
    }

    @Test
    void withoutATokenALoopbackAddressIsServedOpen() throws Exception {
        AdminServer admin = closeLater(AdminServer.start(
                InetSocketAddress.createUnresolved("localhost", 0), registry, null, null));

        assertThat(admin.address().getAddress().isLoopbackAddress()).isTrue();
        assertThat(get(admin, "/metrics", null).statusCode()).isEqualTo(200);
        assertThat(get(admin, "/status", null).statusCode()).as("no status view on a worker").isEqualTo(404);
    }

    @Test
    void withoutATokenAnAddressOtherMachinesReachIsRefusedUnlessAskedFor() {
        InetSocketAddress everywhere = new InetSocketAddress("0.0.0.0", 0);
        assertThatThrownBy(() -> AdminServer.start(everywhere, registry, null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an admin endpoint on 0.0.0.0:0 would be open to other machines (it is not a loopback"
                        + " address) without authentication, since there is no token. Set a token (--token or"
                        + " PANOPTES_TOKEN; scrapers then send 'Authorization: Bearer TOKEN'), or serve it on"
                        + " 127.0.0.1, or add --metrics-insecure to serve it open anyway");
        assertThatThrownBy(() -> AdminServer.checkExposure(InetSocketAddress.createUnresolved("10.1.2.3", 9464), false,
                false)).hasMessageStartingWith("an admin endpoint on 10.1.2.3:9464 would be open to other machines");
        AdminServer.checkExposure(everywhere, true, false);
        AdminServer.checkExposure(everywhere, false, true);
        AdminServer.checkExposure(InetSocketAddress.createUnresolved("127.0.0.1", 9464), false, false);
        AdminServer.checkExposure(InetSocketAddress.createUnresolved("::1", 9464), false, false);
    }

    @Test
    void aClientThatSendsHalfARequestOrNothingDoesNotHoldUpTheOthers() throws Exception {
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, null, null));
        Socket silent = closeLater(connect(admin));
        Socket half = closeLater(connect(admin));
        half.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
        half.getOutputStream().flush();
        Socket otherHalf = closeLater(connect(admin));
        otherHalf.getOutputStream().write("GE".getBytes(StandardCharsets.US_ASCII));
        otherHalf.getOutputStream().flush();

        long start = System.nanoTime();
        HttpResponse<String> scrape = get(admin, "/metrics", null);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(scrape.statusCode()).isEqualTo(200);
        assertThat(took).as("a scrape while three clients stall").isLessThan(Duration.ofSeconds(3));
        assertThat(silent.isClosed()).isFalse();
    }

    @Test
    void aConnectionThatOutlastsItsDeadlineIsCutAndFreesItsThread() throws Exception {
        // One thread only: had the stalled client kept it, nothing else would be answered.
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, null, null, false,
                new AdminServer.Limits(1, 4, Duration.ofMillis(300))));
        Socket half = closeLater(connect(admin));
        half.getOutputStream().write("GET /metrics HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
        half.setSoTimeout(10_000);

        assertThat(half.getInputStream().read()).as("the server closed the stalled connection").isEqualTo(-1);
        assertThat(get(admin, "/metrics", null).statusCode()).isEqualTo(200);
    }

    @Test
    void aClientThatDoesNotReadItsAnswerIsCutAtTheDeadline() throws Exception {
        // An answer far larger than the socket buffers: writing it blocks until the client reads.
        String huge = "x".repeat(16 << 20);
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, () -> huge, null, false,
                new AdminServer.Limits(1, 4, Duration.ofMillis(500))));
        Socket reader = new Socket();
        closeLater(reader);
        reader.setReceiveBufferSize(4096);
        reader.connect(admin.address());
        reader.getOutputStream().write("GET /status HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        reader.getOutputStream().flush();

        long start = System.nanoTime();
        HttpResponse<String> scrape = get(admin, "/metrics", null);

        assertThat(scrape.statusCode()).isEqualTo(200);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(drain(reader)).as("bytes the slow reader got before the cut").isLessThan(huge.length());
    }

    @Test
    void whenEveryThreadIsBusyAndNoneMayWaitTheAnswerIs503AtOnce() throws Exception {
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, null, null, false,
                new AdminServer.Limits(1, 0, Duration.ofSeconds(20))));
        Socket half = closeLater(connect(admin));
        half.getOutputStream().write("GET /metrics HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            HttpResponse<String> busy = get(admin, "/metrics", null);
            assertThat(busy.statusCode()).isEqualTo(503);
            assertThat(busy.headers().firstValue("Retry-After")).hasValue("1");
        });
    }

    @Test
    void aMalformedRequestIsAnswered400AndOnlyGetAndHeadAreServed() throws Exception {
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, null, null));

        assertThat(raw(admin, "HELLO\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(raw(admin, "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"))
                .startsWith("HTTP/1.1 405 ").containsIgnoringCase("Allow: GET, HEAD\r\n");
        assertThat(raw(admin, "HEAD /metrics HTTP/1.0\r\n\r\n")).startsWith("HTTP/1.1 200 OK\r\n")
                .endsWith("\r\n\r\n");
        assertThat(raw(admin, "GET http://localhost/metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"))
                .startsWith("HTTP/1.1 200 OK");
    }

    @Test
    void aSecondAuthorizationHeaderIsRefused() throws Exception {
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, null, TOKEN));

        assertThat(raw(admin, "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                + "\r\nAuthorization: Bearer " + TOKEN + "\r\n\r\n")).startsWith("HTTP/1.1 401 ");
    }

    @Test
    void itsThreadsAreDaemonsSoAnUnclosedEndpointNeverKeepsTheJvmAlive() throws Exception {
        AdminServer admin = closeLater(AdminServer.start(loopback(), registry, null, null));
        assertThat(get(admin, "/metrics", null).statusCode()).isEqualTo(200);

        assertThat(Thread.getAllStackTraces().keySet()).filteredOn(Thread::isAlive)
                .filteredOn(t -> t.getName().startsWith("panoptes-admin") || t.getName().startsWith("HTTP-Dispatcher"))
                .isNotEmpty().allSatisfy(t -> assertThat(t.isDaemon()).as(t.getName()).isTrue());
    }

    // ---- helpers ----

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(0, c);
        return c;
    }

    private static Socket connect(AdminServer admin) throws IOException {
        return new Socket(admin.address().getAddress(), admin.address().getPort());
    }

    private static HttpResponse<String> get(AdminServer admin, String path, String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.address().getPort()
                + path)).timeout(Duration.ofSeconds(5));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends {@code request} as given and reads the answer until the server closes. */
    private static String raw(AdminServer admin, String request) throws IOException {
        try (Socket s = connect(admin)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    /** Reads what is left until the server closes; the count of bytes read. */
    private static long drain(Socket s) throws IOException {
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        byte[] buffer = new byte[1 << 16];
        long total = 0;
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                total += n;
            }
        } catch (java.net.SocketException reset) {
            // A cut connection may end in a reset rather than an orderly close.
        }
        return total;
    }
}

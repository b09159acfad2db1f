package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.http.FakeOpenAiServer.Recorded;
import dev.panoptes.eval.http.FakeOpenAiServer.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * {@link HttpModelClient}'s threads (a fixed set, whatever the calls in flight) and connections
 * (keep-alive, the connection limit, TLS, proxies, connect timeouts); the rest of it is
 * {@link HttpModelClientTest}'s.
 */
class HttpModelClientConnectionsTest extends HttpModelClientFixture {
    /** The client's threads: few, fixed, its own; never the common pool. */
    @Nested
    class Threads {
        private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

        private List<String> threadsNamed(String prefix) {
            return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                    .filter(n -> n.startsWith(prefix + "-")).toList();
        }

        @Test
        void callbacksRunOnTheClientsOwnThreadsAndNoThreadIsStartedPerCall() throws Exception {
            // A few retries among the answers, so that the timer thread completes attempts too.
            server.enqueue(Reply.status(503, "{}").header("retry-after-ms", "5"),
                    Reply.status(429, "{}").header("retry-after-ms", "5"));
            server.otherwise(Reply.ok("same"));
            HttpModelClient client = build(fast());
            int calls = 2_000;
            int inFlight = 32;
            client.complete(prompt("warm-up"));
            Set<String> completedOn = ConcurrentHashMap.newKeySet();
            AtomicInteger issued = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(calls);
            long startedBefore = threads.getTotalStartedThreadCount();

            // Like EvalJobRunner.start: each completion starts the next call, on the completing thread.
            Runnable[] next = new Runnable[1];
            next[0] = () -> {
                if (issued.incrementAndGet() > calls) {
                    return;
                }
                client.completeAsync(prompt("p")).whenComplete((r, t) -> {
                    completedOn.add(Thread.currentThread().getName());
                    if (t != null) {
                        failed.incrementAndGet();
                    }
                    done.countDown();
                    next[0].run();
                });
            };
            for (int i = 0; i < inFlight; i++) {
                next[0].run();
            }

            assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
            assertThat(failed).hasValue(0);
            String test = Thread.currentThread().getName();
            assertThat(completedOn).allSatisfy(name -> assertThat(name).satisfiesAnyOf(
                    n -> assertThat(n).startsWith(client.threadPrefix() + "-"),
                    n -> assertThat(n).isEqualTo(test)));
            assertThat(completedOn).noneMatch(n -> n.contains("ForkJoinPool") || n.startsWith("Thread-"));
            assertThat(completedOn).anyMatch(n -> n.startsWith(client.threadPrefix() + "-io-"));
            // The client before Apache started one thread per call; the server's are all started.
            assertThat(threads.getTotalStartedThreadCount() - startedBefore).isLessThan(5);
        }

        @Test
        void theThreadsStayFixedWith256CallsInFlightAndCloseEndsThem() throws Exception {
            try (SilentServer silent = new SilentServer()) {
                HttpModelClient client = build(fast(silent.baseUrl()).requestTimeout(Duration.ofSeconds(30)));
                String prefix = client.threadPrefix();
                // The I/O thread, the idle thread Apache keeps (which starts the I/O thread), and
                // the timer.
                await().atMost(Duration.ofSeconds(5)).until(() -> threadsNamed(prefix).size() == 3);
                int liveBefore = threads.getThreadCount();
                long startedBefore = threads.getTotalStartedThreadCount();

                List<CompletableFuture<ModelResponse>> calls = new ArrayList<>();
                for (int i = 0; i < 256; i++) {
                    calls.add(client.completeAsync(prompt("p" + i)));
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> silent.connections() == 256);

                assertThat(threadsNamed(prefix)).hasSize(3);
                assertThat(threads.getThreadCount()).isLessThanOrEqualTo(liveBefore + 1);
                assertThat(threads.getTotalStartedThreadCount() - startedBefore).isLessThan(5);
                assertThat(client.callsInFlight()).isEqualTo(256);
                // One timeout per attempt on the one timer thread.
                assertThat(client.pendingTimers()).isEqualTo(256);

                client.close();

                for (CompletableFuture<ModelResponse> call : calls) {
                    assertThat(catchThrowable(() -> call.get(5, TimeUnit.SECONDS)))
                            .isInstanceOf(ExecutionException.class).cause()
                            .isExactlyInstanceOf(WorkerException.class)
                            .hasMessageContaining("abandoned after 1 attempt: the client was closed");
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed(prefix).isEmpty());
                await().atMost(Duration.ofSeconds(10)).until(() -> silent.clientHungUp(0) && silent.clientHungUp(255));
            }
        }

        @Test
        void callsWaitingToRetryHoldNoThread() {
            server.otherwise(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}")
                    .header("retry-after-ms", "30000"));
            // Timeouts far from the 2 s and 5 s of fast(): they are not what this test is about, and
            // its 200 first attempts connect at once through the one I/O thread. On a cold client
            // at load 12 some of those connects took over 2 s and were retried, so that those calls
            // ended after 2 attempts, not the 1 this test checks.
            HttpModelClient client = build(fast().retryBudget(Duration.ofMinutes(2))
                    .connectTimeout(Duration.ofSeconds(30)).requestTimeout(Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(5)).until(() -> threadsNamed(client.threadPrefix()).size() == 3);
            int liveBefore = threads.getThreadCount();

            List<CompletableFuture<ModelResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                calls.add(client.completeAsync(prompt("p" + i)));
            }
            // Not pendingTimers() == 200: an attempt waiting for its answer has a timer too (its
            // timeout), and a call closed then has no failure yet to name.
            await().atMost(Duration.ofSeconds(20)).until(() -> client.callsWaitingToRetry() == 200);
            assertThat(server.requestCount()).isEqualTo(200);
            // An attempt's timeout is cancelled just after its call scheduled the retry.
            await().atMost(Duration.ofSeconds(5)).until(() -> client.pendingTimers() == 200);

            // 200 calls wait 30 s each for their retry, on the one timer thread.
            assertThat(threads.getThreadCount()).isLessThanOrEqualTo(liveBefore + 1);
            assertThat(threadsNamed(client.threadPrefix())).hasSize(3);
            assertThat(calls).noneMatch(CompletableFuture::isDone);

            client.close();

            assertThat(calls).allSatisfy(call -> assertThat(catchThrowable(call::join)).cause()
                    .isExactlyInstanceOf(WorkerException.class)
                    .hasMessageContaining("abandoned after 1 attempt: the client was closed; last failure: HTTP 503"));
        }
    }

    /** Keep-alive, the connection limit, TLS, proxies, timeouts of the connection. */

    @Nested
    class Connections {
        @Test
        void manySequentialCallsShareOneKeepAliveConnection() throws Exception {
            server.otherwise(Reply.ok("again"));
            HttpModelClient client = build(fast());

            for (int i = 0; i < 50; i++) {
                client.complete(prompt("p" + i));
            }

            assertThat(server.requests()).hasSize(50);
            assertThat(server.requests().stream().map(Recorded::clientPort).distinct()).hasSize(1);
        }

        @Test
        void concurrentCallsReuseTheirConnectionsAfterwards() throws Exception {
            server.otherwise(Reply.ok("again"));
            HttpModelClient client = build(fast());
            for (int round = 0; round < 5; round++) {
                List<CompletableFuture<ModelResponse>> calls = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    calls.add(client.completeAsync(prompt("p" + i)));
                }
                for (CompletableFuture<ModelResponse> call : calls) {
                    call.get(10, TimeUnit.SECONDS);
                }
            }

            assertThat(server.requests()).hasSize(80);
            assertThat(server.requests().stream().map(Recorded::clientPort).distinct().count()).isLessThanOrEqualTo(16);
        }

        @Test
        void maxConnectionsBoundsTheConnectionsAndTheRestWait() throws Exception {
            try (SilentServer silent = new SilentServer()) {
                HttpModelClient client = build(fast(silent.baseUrl()).maxConnections(4)
                        .requestTimeout(Duration.ofSeconds(30)));

                for (int i = 0; i < 16; i++) {
                    client.completeAsync(prompt("p" + i));
                }

                await().atMost(Duration.ofSeconds(5)).until(() -> silent.connections() == 4);
                await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                        .until(() -> silent.connections() == 4);
                assertThat(client.callsInFlight()).isEqualTo(16);
            }
        }

        @Test
        void aPlainHttpEndpointNeverBuildsTheTlsContext() throws Exception {
            try (FakeOpenAiServer plain = new FakeOpenAiServer()) {
                plain.otherwise(Reply.ok("in the clear"));
                HttpModelClient client = build(fast(plain.baseUrl()));

                assertThat(client.complete(prompt("p")).text()).isEqualTo("in the clear");
                assertThat(client.tlsBuilt()).as("the JVM's TLS context costs ~130 ms to build").isFalse();
            }
        }

        @Test
        void anHttpsEndpointIsCalledWithVerifiedTls() throws Exception {
            TestTls tls = TestTls.get();
            try (FakeOpenAiServer https = new FakeOpenAiServer(tls.server)) {
                https.otherwise(Reply.ok("over TLS"));
                HttpModelClient trusting = build(fast(https.baseUrl()).sslContext(tls.trustingClient));

                assertThat(trusting.tlsBuilt()).as("built at start for an https API").isTrue();
                assertThat(trusting.complete(prompt("p")).text()).isEqualTo("over TLS");
                assertThat(trusting.complete(prompt("q")).text()).isEqualTo("over TLS");
                assertThat(trusting.tlsBuilt()).isTrue();
                assertThat(https.requests()).extracting(Recorded::clientPort).containsOnly(
                        https.requests().get(0).clientPort());

                // The certificate names 127.0.0.1 only: another name for the host fails verification.
                HttpModelClient wrongName = build(fast(https.baseUrl("localhost")).sslContext(tls.trustingClient));
                Throwable misnamed = catchThrowable(() -> wrongName.complete(prompt("p")));
                assertThat(misnamed).isInstanceOf(WorkerFaultException.class)
                        .hasMessageStartingWith("TLS with the model API at localhost:" + https.port() + " failed");
                assertThat(https.requests()).hasSize(2);
            }
        }

        @Test
        void httpsUsesTheJvmsDefaultTrustStoreWhichDoesNotTrustATestCertificate() throws Exception {
            TestTls tls = TestTls.get();
            try (FakeOpenAiServer https = new FakeOpenAiServer(tls.server)) {
                https.otherwise(Reply.ok("never seen"));
                HttpModelClient client = build(fast(https.baseUrl()));

                Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

                assertThat(thrown).isInstanceOf(WorkerFaultException.class)
                        .hasMessageStartingWith("TLS with the model API at 127.0.0.1:" + https.port() + " failed (")
                        .hasMessageContaining("unable to find valid certification path");
                assertThat(https.requestCount()).isZero();
            }
        }

        @Test
        void theHttpProxyOfTheSystemPropertiesIsUsed() throws Exception {
            server.otherwise(Reply.ok("via the proxy"));
            String[] names = {"http.proxyHost", "http.proxyPort", "http.nonProxyHosts"};
            String[] saved = new String[names.length];
            for (int i = 0; i < names.length; i++) {
                saved[i] = System.getProperty(names[i]);
            }
            try {
                // The fake server plays the proxy: it is sent the absolute URL of a host that
                // does not exist, which only the proxy could reach.
                System.setProperty("http.proxyHost", "127.0.0.1");
                System.setProperty("http.proxyPort", Integer.toString(server.port()));
                System.setProperty("http.nonProxyHosts", "none.invalid");
                HttpModelClient client = build(fast(URI.create("http://model-api.invalid:8000/v1")));

                assertThat(client.complete(prompt("p")).text()).isEqualTo("via the proxy");

                Recorded request = server.onlyRequest();
                assertThat(request.target()).isEqualTo(URI.create("http://model-api.invalid:8000/v1/chat/completions"));
                assertThat(request.header("Host")).isEqualTo("model-api.invalid:8000");
            } finally {
                for (int i = 0; i < names.length; i++) {
                    if (saved[i] == null) {
                        System.clearProperty(names[i]);
                    } else {
                        System.setProperty(names[i], saved[i]);
                    }
                }
            }
        }

        @Test
        void aHostNameThatDoesNotResolveIsTheWorkersFault() {
            HttpModelClient client = build(fast(URI.create("http://no-such-host.invalid:8000/v1")));

            Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));

            assertThat(thrown).isInstanceOf(WorkerFaultException.class).hasMessage("cannot resolve the host name"
                    + " 'no-such-host.invalid' of the model API at http://no-such-host.invalid:8000/v1; check"
                    + " --model-api");
        }

        @Test
        void aConnectionThatCannotBeMadeInTimeIsRetriedAsTheMoments() throws Exception {
            // A listener whose accept queue is full drops new connection attempts (Linux), so
            // that the client's connect hangs until its connect timeout.
            try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                List<Socket> queued = new ArrayList<>();
                try {
                    boolean hangs = false;
                    for (int i = 0; i < 8 && !hangs; i++) {
                        Socket s = new Socket();
                        try {
                            s.connect(full.getLocalSocketAddress(), 200);
                            queued.add(s);
                        } catch (java.net.SocketTimeoutException e) {
                            s.close();
                            hangs = true;
                        }
                    }
                    Assumptions.assumeTrue(hangs, "this kernel does not leave connects to a full listener hanging");
                    HttpModelClient client = build(fast(URI.create("http://127.0.0.1:" + full.getLocalPort() + "/v1"))
                            .connectTimeout(Duration.ofMillis(300)).maxAttempts(2));

                    long start = System.nanoTime();
                    Throwable thrown = catchThrowable(() -> client.complete(prompt("p")));
                    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

                    assertThat(thrown).isExactlyInstanceOf(WorkerException.class)
                            .hasMessageContaining("2 attempts")
                            .hasMessageContaining("connecting to 127.0.0.1:" + full.getLocalPort()
                                    + " timed out after 300 ms");
                    assertScope(thrown, FailureScope.TRANSIENT);
                    assertThat(elapsedMs).isBetween(550L, 5_000L);
                } finally {
                    for (Socket s : queued) {
                        s.close();
                    }
                }
            }
        }

        @Test
        void theKeyPrintsRedactedInApacheHttpClientsHeaderLog() throws Exception {
            String key = "sk-never-in-a-log";
            server.enqueue(Reply.ok("ok"));
            build(fast().apiKey(key)).complete(prompt("p"));

            assertThat(server.onlyRequest().header("Authorization")).isEqualTo("Bearer " + key);
            assertThat(new AuthorizationHeader(key).toString())
                    .isEqualTo("Authorization: Bearer [REDACTED]").doesNotContain(key);
        }
    }

}

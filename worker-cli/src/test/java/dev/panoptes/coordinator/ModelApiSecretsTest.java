package dev.panoptes.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.console.Logging;
import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.testing.LogCapture;
import dev.panoptes.testing.QuestionSuite;
import dev.panoptes.testing.Scrapes;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker whose model-API URL carries credentials, in user info and in the query, registers
 * with a coordinator run: what the coordinator's operator sees (its logs at DEBUG, its console,
 * its summary, /metrics and /status over HTTP) names the API as scheme://host:port/path and
 * never the secrets. The worker here is one built on the library, or another implementation of
 * the protocol: {@code worker.jar} itself refuses such a URL (see WorkerMainTest).
 */
@Timeout(90)
class ModelApiSecretsTest {
    private static final String TOKEN = "fleet-token";
    private static final String SECRET_URL = "http://user:secret@127.0.0.1:8123/v1?api-key=SECRET";
    private static final String REDACTED = "http://127.0.0.1:8123/v1";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final LogCapture logs = LogCapture.everything();
    private final CountDownLatch release = new CountDownLatch(1);
    /** The logger levels as other tests in this JVM left them; put back after. */
    private final Map<ch.qos.logback.classic.Logger, ch.qos.logback.classic.Level> levels = new java.util.HashMap<>();
    private WorkerLoop worker;
    private CoordinatorRun run;

    @AfterEach
    void stop() {
        release.countDown();
        if (worker != null) {
            worker.close();
        }
        if (run != null) {
            run.closeAdmin();
        }
        threads.shutdownNow();
        logs.close();
        levels.forEach(ch.qos.logback.classic.Logger::setLevel);
    }

    /** Every logger at DEBUG, whatever earlier tests set (the library's are quieted by some commands). */
    private void logEverything() {
        ch.qos.logback.classic.LoggerContext context =
                (ch.qos.logback.classic.LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
        for (ch.qos.logback.classic.Logger logger : context.getLoggerList()) {
            levels.put(logger, logger.getLevel());
        }
        Logging.apply(ch.qos.logback.classic.Level.DEBUG, false);
    }

    @Test
    void noCredentialOfAWorkersModelApiUrlReachesTheCoordinatorsLogsMetricsStatusOrSummary() throws Exception {
        logEverything();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicReference<InetSocketAddress> coordinator = new AtomicReference<>();
        run = new CoordinatorRun(settings(), new PrintWriter(out, true), new PrintWriter(err, true), false,
                "java -jar worker.jar")
                .withAdmin(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .onListening(where -> {
                    coordinator.set(where);
                    worker = new WorkerLoop(where, "w-creds", 2, new ThrottledApi(), WorkerOptions.defaults()
                            .withToken(TOKEN).withModels(List.of("m"))
                            .withLabels(Map.of("model", "m", "endpoint", SECRET_URL))
                            .withHeartbeat(Duration.ofMillis(200))
                            .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)));
                    Future<?> unused = threads.submit(() -> {
                        worker.runForever();
                        return null;
                    });
                });
        Future<Integer> exit = threads.submit(run::run);
        await().atMost(Duration.ofSeconds(30)).until(() -> run.adminAddress() != null);
        InetSocketAddress admin = run.adminAddress();

        // While the worker holds its jobs: the status view names its API, redacted.
        AtomicReference<String> status = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            status.set(Scrapes.get(admin, "/status", TOKEN).body());
            assertThat(JSON.readTree(status.get()).get("workers")).hasSize(1);
        });
        JsonNode view = JSON.readTree(status.get());
        assertThat(view.at("/workers/0/id").asText()).isEqualTo("w-creds");
        assertThat(view.at("/workers/0/endpoint").asText()).isEqualTo(REDACTED);
        String metricsDuring = Scrapes.metrics(admin, TOKEN);

        release.countDown();
        assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
        String metricsAfter = Scrapes.metrics(admin, TOKEN);
        String statusAfter = Scrapes.get(admin, "/status", TOKEN).body();

        // The rate governor grouped the worker by the redacted API, and the summary says so.
        assertThat(out.toString()).contains("rate:        " + REDACTED + " answered 429 ");
        List<String> logLines = logs.lines();
        assertThat(logLines).as("the registration is logged, with the worker's labels")
                .anySatisfy(l -> assertThat(l).contains("w-creds").contains("registered").contains(REDACTED));
        for (String seen : List.of(String.join("\n", logLines), out.toString(), err.toString(), status.get(),
                statusAfter, metricsDuring, metricsAfter)) {
            assertThat(seen).doesNotContainIgnoringCase("secret").doesNotContain("user:");
        }
        assertThat(coordinator.get()).isNotNull();
    }

    /** Answers every vignette after {@link #release}, and says its API answered 429 once per job. */
    private final class ThrottledApi implements AsyncJobRunner {
        private final AtomicLong throttled = new AtomicLong();

        @Override
        public CompletionStage<JobOutcome> start(Job job) {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                throttled.incrementAndGet();
                List<ResponseRecord> records = new ArrayList<>();
                for (Vignette v : job.spec().vignettes()) {
                    records.add(new ResponseRecord(v.id(), v.expected(), "m", "stop", 5L, new Usage(3, 2)));
                }
                return new JobOutcome(job.id(), records);
            }, threads);
        }

        @Override
        public long throttledCount() {
            return throttled.get();
        }
    }

    /** 8 vignettes in jobs of 4: 2 jobs for model m, behind the token. */
    private CoordinatorSettings settings() throws Exception {
        Path suite = QuestionSuite.write(dir, 8);
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, "", TOKEN, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("m"), "exact", 1, null, null);
    }
}

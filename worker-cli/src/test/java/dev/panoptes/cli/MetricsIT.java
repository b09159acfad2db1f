package dev.panoptes.cli;

import dev.panoptes.demo.StubModelServer;
import dev.panoptes.testing.JarProcesses;
import dev.panoptes.testing.QuestionSuite;
import dev.panoptes.testing.Scrapes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.panoptes.testing.Scrapes.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The admin endpoints as Prometheus meets them, with the built {@code worker.jar} as real
 * processes over loopback: a worker's {@code panoptes_worker_connected} and reconnects counter
 * while it runs jobs, once its coordinator is gone and after it reconnects to another; a
 * coordinator's {@code /metrics} and {@code /status} after its summary printed, for its
 * {@code --admin-linger} and no longer, and a SIGTERM that ends the linger at once. One worker
 * process and two coordinators serve every scenario.
 */
@Timeout(90)
class MetricsIT {
    private static final String MODEL = DemoCommand.MODEL;
    private static final Pattern ADMIN = Pattern.compile("admin endpoint on http://(127\\.0\\.0\\.1):(\\d+)/");
    private static final Duration LINGER = Duration.ofSeconds(3);

    @TempDir
    Path dir;

    private final JarProcesses jars;

    MetricsIT(TestInfo info) throws IOException {
        jars = new JarProcesses(getClass().getSimpleName() + "-" + info.getTestMethod().orElseThrow().getName(),
                Duration.ofSeconds(30));
    }

    @AfterEach
    void tearDown() throws Exception {
        jars.close();
    }

    @Test
    void theWorkersGaugeFollowsItsConnectionAndTheCoordinatorsFiguresOutliveItsRunForTheLinger() throws Exception {
        // 16 vignettes in 4 jobs of 4 at 150 ms a call, two requests in flight: the worker runs for
        // about 1.2 s, long enough for the scrapes below to see it busy (with the default 64 in
        // flight it ran all four jobs in two 150 ms rounds, and once ended before the first scrape).
        StubModelServer model = jars.closeLater(StubModelServer.start(loopback(), Duration.ofMillis(150), 8));
        Path suite = QuestionSuite.write(dir, 16);
        Process first = jars.start(coordinator(suite, "first.db", "127.0.0.1:0", "--admin-linger",
                LINGER.toSeconds() + "s"));
        String address = jars.awaitListening(first);
        InetSocketAddress firstAdmin = admin(first);

        Process worker = jars.start("--coordinator", address, "--model-api", model.baseUrl().toString(),
                "--model", MODEL, "--id", "w-metrics", "--capacity", "2", "--requests", "2", "--heartbeat", "1s",
                "--metrics", "127.0.0.1:0");
        InetSocketAddress workerAdmin = admin(worker);

        // Registered and running jobs: connected reads 1 (it read NaN once its lambda was collected).
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
            String scrape = Scrapes.metrics(workerAdmin);
            assertThat(value(scrape, "panoptes_worker_jobs_running")).isPositive();
            assertThat(value(scrape, "panoptes_worker_connected")).isEqualTo(1.0);
        });
        assertThat(value(Scrapes.metrics(workerAdmin), "panoptes_worker_reconnects_total")).isZero();

        // The summary printed, the coordinator's endpoint still answers with the final counters.
        jars.awaitOutput(first, "Run complete");
        long summarySeen = System.nanoTime();
        jars.awaitOutput(first, "stays up for 3s so that scrapers read the final figures (--admin-linger)");
        String finalScrape = Scrapes.metrics(firstAdmin);
        assertThat(value(finalScrape, "panoptes_coordinator_jobs_completed_total")).isEqualTo(4.0);
        assertThat(value(finalScrape, "panoptes_coordinator_answers_stored_total")).isEqualTo(16.0);
        assertThat(Scrapes.get(firstAdmin, "/status", null).body()).contains("\"state\" : \"finished\"")
                .contains("\"jobsDone\" : 4");

        // Its run over, the coordinator closed the worker's connection: the gauge reads 0.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(value(Scrapes.metrics(workerAdmin), "panoptes_worker_connected")).isZero());

        // A second coordinator on the same address (the first one's worker server and database
        // lock are released before it lingers): the worker reconnects, and counts it.
        // Its run is long enough (64 vignettes, 32 rounds of 150 ms at two requests) that the worker
        // is still connected when the test looks: a run of 16 can end between two scrapes.
        Path longer = QuestionSuite.write(Files.createDirectories(dir.resolve("second")), 64);
        Process second = jars.start(coordinator(longer, "second.db", address));

        InetSocketAddress secondAdmin = admin(second);
        // The worker's reconnect backoff (0.5 s doubling, jittered) kept running while no coordinator
        // listened: its pauses after the first close add up to 31.5 s at most before one falls after
        // the second coordinator's start, so that is how long this may take on a loaded machine.
        await().atMost(Duration.ofSeconds(45)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
            String scrape = Scrapes.metrics(workerAdmin);
            assertThat(value(scrape, "panoptes_worker_connected")).isEqualTo(1.0);
            assertThat(value(scrape, "panoptes_worker_reconnects_total")).isEqualTo(1.0);
        });

        // The linger ends the first process, and not before its time.
        jars.assertExitCode(first, 0);
        double lingered = (System.nanoTime() - summarySeen) / 1e9;
        assertThat(lingered).as("seconds between the summary and the exit").isGreaterThan(LINGER.toSeconds() - 1.0);

        // At the default linger (35 s) a SIGTERM ends the wait at once.
        jars.awaitOutput(second, "stays up for 35s");
        assertThat(Scrapes.get(secondAdmin, "/status", null).body()).contains("\"state\" : \"finished\"");
        long signalled = System.nanoTime();
        second.destroy();
        assertThat(second.waitFor(10, TimeUnit.SECONDS)).as("exited after SIGTERM; output:%n%s", jars.log(second))
                .isTrue();
        assertThat((System.nanoTime() - signalled) / 1e9).as("seconds from SIGTERM to exit").isLessThan(10.0);
        assertThat(second.exitValue()).isEqualTo(143);
        assertThat(jars.log(worker)).doesNotContain("NaN");
    }

    private String[] coordinator(Path suite, String db, String listen, String... extra) {
        List<String> args = new ArrayList<>(List.of("coordinator", "--suite", suite.toString(), "--model", MODEL,
                "--db", dir.resolve(db).toString(), "--listen", listen, "--job-size", "4",
                "--heartbeat-interval", "1s", "--metrics", "127.0.0.1:0"));
        args.addAll(List.of(extra));
        return args.toArray(String[]::new);
    }

    /** Waits for the process to print where its admin endpoint listens. */
    private InetSocketAddress admin(Process p) throws IOException {
        jars.awaitOutput(p, "admin endpoint on http://");
        Matcher m = ADMIN.matcher(jars.log(p));
        assertThat(m.find()).as("the admin address in:%n%s", jars.log(p)).isTrue();
        return new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2)));
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }
}

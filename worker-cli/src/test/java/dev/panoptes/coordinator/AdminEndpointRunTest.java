package dev.panoptes.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.cli.StatusCommand;
import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.testing.QuestionSuite;
import dev.panoptes.testing.Scrapes;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.testing.Scrapes.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A coordinator run with its admin endpoint, in process, with two real workers over loopback:
 * /metrics scraped while jobs are held and after the run, /status behind the token, and the
 * {@code status} command's table.
 */
class AdminEndpointRunTest {
    private static final String TOKEN = "s3cret-token";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    /** Workers hold every job until this opens, so that the run can be looked at mid-way. */
    private final CountDownLatch release = new CountDownLatch(1);
    private CoordinatorRun run;

    @AfterEach
    void stop() {
        release.countDown();
        workers.forEach(WorkerLoop::close);
        if (run != null) {
            run.closeAdmin();
        }
        threads.shutdownNow();
    }

    @Test
    void metricsAndStatusTellTheRunWhileItRunsAndAfterItEnds() throws Exception {
        run = new CoordinatorRun(settings(), new PrintWriter(out, true), new PrintWriter(err, true), false,
                "java -jar worker.jar")
                .withAdmin(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .onListening(address -> {
                    startWorker(address, "w-one");
                    startWorker(address, "w-two");
                });
        Future<Integer> exit = threads.submit(run::run);
        await().atMost(Duration.ofSeconds(20)).until(() -> run.adminAddress() != null);
        InetSocketAddress admin = run.adminAddress();

        // During: both workers hold 2 jobs each (capacity 2), the other 2 jobs wait.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            String scrape = Scrapes.metrics(admin, TOKEN);
            assertThat(value(scrape, "panoptes_coordinator_workers_connected")).isEqualTo(2.0);
            assertThat(value(scrape, "panoptes_coordinator_jobs_in_flight")).isEqualTo(4.0);
            assertThat(value(scrape, "panoptes_coordinator_jobs_queued")).isEqualTo(2.0);
        });
        String during = Scrapes.metrics(admin, TOKEN);
        assertThat(value(during, "panoptes_coordinator_jobs_completed_total")).isZero();
        assertThat(value(during, "panoptes_coordinator_workers_quarantined")).isZero();
        assertThat(value(during, "panoptes_coordinator_heartbeat_age_max_seconds")).isBetween(0.0, 5.0);
        assertThat(value(during, "panoptes_coordinator_workers_registered_total")).isEqualTo(2.0);

        HttpResponse<String> anonymousScrape = Scrapes.get(admin, "/metrics", null);
        assertThat(anonymousScrape.statusCode()).as("/metrics is behind the token too").isEqualTo(401);
        assertThat(anonymousScrape.body()).doesNotContain("panoptes_coordinator");
        assertThat(Scrapes.get(admin, "/metrics", "wrong-token").statusCode()).isEqualTo(401);
        HttpResponse<String> anonymous = Scrapes.get(admin, "/status", null);
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.body()).doesNotContain("w-one");
        assertThat(Scrapes.get(admin, "/status", "wrong-token").statusCode()).isEqualTo(401);
        HttpResponse<String> status = Scrapes.get(admin, "/status", TOKEN);
        assertThat(status.statusCode()).isEqualTo(200);
        assertThat(status.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode view = JSON.readTree(status.body());
        assertThat(view.at("/run/jobsTotal").asInt()).isEqualTo(6);
        assertThat(view.at("/run/jobsInFlight").asInt()).isEqualTo(4);
        assertThat(view.at("/run/models/0").asText()).isEqualTo("m");
        assertThat(view.at("/run/state").asText()).isEqualTo("running");
        assertThat(view.get("workers")).hasSize(2);
        assertThat(view.at("/workers/0/id").asText()).isIn("w-one", "w-two");
        assertThat(view.at("/workers/0/capacity").asInt()).isEqualTo(2);
        assertThat(view.at("/workers/0/inFlight").asInt()).isEqualTo(2);
        assertThat(view.at("/workers/0/quarantine").asText()).isEqualTo("none");
        assertThat(view.at("/workers/0/heartbeatAgeSeconds").asDouble()).isBetween(0.0, 5.0);
        assertThat(view.at("/workers/0/models/0").asText()).isEqualTo("m");

        StringWriter table = new StringWriter();
        StringWriter tableErr = new StringWriter();
        int code = WorkerMain.run(new String[] {"status", "--coordinator-admin", hostPort(admin)},
                new PrintWriter(table, true), new PrintWriter(tableErr, true), Map.of(WorkerMain.TOKEN_ENV, TOKEN));
        assertThat(code).as(tableErr.toString()).isZero();
        String printed = table.toString();
        System.out.println("status as printed:\n" + printed);
        assertThat(printed).contains("models m  scorer exact  epochs 1")
                .contains("running (answering): 0/6 jobs done, 0 failed, 4 in flight")
                .containsPattern("(?m)^WORKER\\s+ADDRESS\\s+CAPACITY\\s+IN FLIGHT\\s+QUEUED\\s+COMPLETED\\s+FAILURES"
                        + "\\s+QUARANTINE\\s+HEARTBEAT\\s+MODELS$")
                .containsPattern("(?m)^w-(one|two)\\s+/127\\.0\\.0\\.1:\\d+\\s+2\\s+2\\s+0\\s+0\\s+0\\s+none\\s+\\S+s\\s+m$");
        List<String> lines = printed.lines().filter(l -> l.startsWith("WORKER") || l.startsWith("w-")).toList();
        assertThat(lines).hasSize(3);
        int column = lines.get(0).indexOf("CAPACITY");
        assertThat(lines).allSatisfy(l -> assertThat(l.charAt(column - 1)).isEqualTo(' '));

        // After: every job answered and stored.
        release.countDown();
        assertThat(exit.get(30, TimeUnit.SECONDS)).isZero();
        String after = Scrapes.metrics(admin, TOKEN);
        System.out.println("scrape after the run:\n" + after);
        assertThat(value(after, "panoptes_coordinator_jobs_completed_total")).isEqualTo(6.0);
        assertThat(value(after, "panoptes_coordinator_answers_stored_total")).isEqualTo(24.0);
        assertThat(value(after, "panoptes_coordinator_jobs_failed_total")).isZero();
        assertThat(value(after, "panoptes_coordinator_jobs_in_flight")).isZero();
        assertThat(value(after, "panoptes_model_call_seconds_count", "model=\"m\"")).isEqualTo(24.0);
        assertThat(value(after, "panoptes_model_call_seconds_sum", "model=\"m\"")).isEqualTo(24 * 0.005, within());
        assertThat(value(after, "panoptes_model_call_seconds_bucket", "le=\"0.1\"")).isEqualTo(24.0);
        assertThat(value(after, "panoptes_model_tokens_total", "kind=\"prompt\"")).isEqualTo(24 * 3.0);
        assertThat(value(after, "panoptes_model_tokens_total", "kind=\"completion\"")).isEqualTo(24 * 2.0);
        assertThat(value(after, "panoptes_store_write_seconds_count", "operation=\"record\"")).isEqualTo(6.0);
        assertThat(Scrapes.labelNames(after)).doesNotContain("job", "job_id", "jobId", "worker", "worker_id")
                .allSatisfy(l -> assertThat(l).isIn("model", "kind", "scope", "reason", "operation", "le"));
        assertThat(after).contains("# TYPE panoptes_coordinator_jobs_completed_total counter")
                .contains("# TYPE panoptes_model_call_seconds histogram")
                .contains("# TYPE panoptes_coordinator_workers_connected gauge");

        JsonNode finished = JSON.readTree(Scrapes.get(admin, "/status", TOKEN).body());
        assertThat(finished.at("/run/state").asText()).isEqualTo("finished");
        assertThat(finished.at("/run/jobsDone").asInt()).isEqualTo(6);
        assertThat(finished.at("/run/answersStored").asInt()).isEqualTo(24);
        assertThat(finished.at("/run/etaSeconds").asDouble()).isZero();
        assertThat(err.toString()).contains("admin endpoint on http://" + hostPort(admin) + "/: /metrics, /status"
                + " (with the token)");
    }

    @Test
    void theStatusCommandSaysWhatIsWrongWithExitCodesItDocuments() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        StringWriter refusedErr = new StringWriter();
        assertThat(WorkerMain.run(new String[] {"status", "--coordinator-admin", "127.0.0.1:" + port},
                new PrintWriter(new StringWriter()), new PrintWriter(refusedErr, true), Map.of()))
                .isEqualTo(StatusCommand.EXIT_UNREACHABLE);
        assertThat(refusedErr.toString()).contains("cannot reach the coordinator's admin endpoint http://127.0.0.1:"
                + port + "/status: connection refused");

        run = new CoordinatorRun(settings(), new PrintWriter(out, true), new PrintWriter(err, true), false,
                "java -jar worker.jar")
                .withAdmin(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Future<Integer> unused = threads.submit(run::run);
        await().atMost(Duration.ofSeconds(20)).until(() -> run.adminAddress() != null);
        String admin = hostPort(run.adminAddress());

        StringWriter noTokenErr = new StringWriter();
        assertThat(WorkerMain.run(new String[] {"status", "--coordinator-admin", admin},
                new PrintWriter(new StringWriter()), new PrintWriter(noTokenErr, true), Map.of()))
                .isEqualTo(StatusCommand.EXIT_UNAUTHORIZED);
        assertThat(noTokenErr.toString()).contains("(HTTP 401): it needs its token; pass --token or set PANOPTES_TOKEN");
        StringWriter wrongErr = new StringWriter();
        assertThat(WorkerMain.run(new String[] {"status", "--coordinator-admin", admin, "--token", "nope"},
                new PrintWriter(new StringWriter()), new PrintWriter(wrongErr, true), Map.of()))
                .isEqualTo(StatusCommand.EXIT_UNAUTHORIZED);
        assertThat(wrongErr.toString()).contains("the token is wrong").doesNotContain("nope");

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            StringWriter empty = new StringWriter();
            assertThat(WorkerMain.run(new String[] {"status", "--coordinator-admin", admin, "--token", TOKEN},
                    new PrintWriter(empty, true), new PrintWriter(new StringWriter()), Map.of())).isZero();
            assertThat(empty.toString()).contains("0/6 jobs done").contains("ETA unknown").contains("no worker connected");
        });
    }

    @Test
    void theStatusCommandRefusesAnAnswerThatIsNotAStatusView() throws Exception {
        com.sun.net.httpserver.HttpServer other = com.sun.net.httpserver.HttpServer.create(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        other.createContext("/status", exchange -> {
            byte[] body = "<html>hello</html>".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        other.start();
        try {
            StringWriter notJsonErr = new StringWriter();
            assertThat(WorkerMain.run(new String[] {"status", "--coordinator-admin", hostPort(other.getAddress())},
                    new PrintWriter(new StringWriter()), new PrintWriter(notJsonErr, true), Map.of()))
                    .isEqualTo(StatusCommand.EXIT_NOT_A_STATUS);
            assertThat(notJsonErr.toString()).contains("answered something that is not a status view")
                    .contains("'<html>hello</html>'");
        } finally {
            other.stop(0);
        }
    }

    // ---- helpers ----

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(1e-9);
    }

    private static String hostPort(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }

    /** Answers every vignette right, in 5 ms as the records say, 3 + 2 tokens each; after {@link #release}. */
    private JobRunner runner() {
        return job -> {
            release.await();
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                records.add(new ResponseRecord(v.id(), v.expected(), "m", "stop", 5L, new Usage(3, 2)));
            }
            return new JobOutcome(job.id(), records);
        };
    }

    private void startWorker(InetSocketAddress coordinator, String id) {
        WorkerOptions options = WorkerOptions.defaults().withModels(List.of("m")).withToken(TOKEN)
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(coordinator, id, 2, runner(), options);
        synchronized (workers) {
            workers.add(loop);
        }
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    /** 24 vignettes in jobs of 4: 6 jobs for model m. */
    private CoordinatorSettings settings() throws Exception {
        Path suite = QuestionSuite.write(dir, 24);
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, "", TOKEN, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("m"), "exact", 1, null, null);
    }
}

package dev.panoptes.admin;

import dev.panoptes.cli.WorkerMain;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.PooledJobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.testing.QuestionSuite;
import dev.panoptes.testing.Scrapes;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import dev.panoptes.worker.WorkerSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.panoptes.testing.Scrapes.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A worker's own /metrics, scraped over loopback while it serves a real coordinator run. */
class WorkerMetricsTest {
    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private WorkerLoop loop;
    private PooledJobRunner pool;
    private AdminServer admin;

    @AfterEach
    void stop() {
        if (loop != null) {
            loop.close();
        }
        if (pool != null) {
            pool.close();
        }
        if (admin != null) {
            admin.close();
        }
        threads.shutdownNow();
    }

    @Test
    void theWorkersMetricsCountItsJobsModelCallsAndConnection() throws Exception {
        WorkerMetrics metrics = new WorkerMetrics();
        admin = AdminServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), metrics.registry(),
                null, null);
        InetSocketAddress address = admin.address();
        assertThat(Scrapes.get(address, "/metrics", null).statusCode()).isEqualTo(200);
        assertThat(Scrapes.get(address, "/status", null).statusCode()).as("no status view on a worker").isEqualTo(404);

        pool = new PooledJobRunner(runner(), 2, "test-job");
        StringWriter out = new StringWriter();
        AtomicReference<InetSocketAddress> coordinator = new AtomicReference<>();
        CoordinatorRun run = new CoordinatorRun(settings(), new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true), false, "java -jar worker.jar")
                .onListening(where -> {
                    coordinator.set(where);
                    loop = new WorkerLoop(where, "w-metrics", 2, metrics.measure(pool), WorkerOptions.defaults()
                            .withModels(List.of("m")).withHeartbeat(Duration.ofMillis(200))
                            .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)));
                    metrics.watchConnection(loop::isConnected, loop::connectionCount);
                    Future<?> unused = threads.submit(() -> {
                        loop.runForever();
                        return null;
                    });
                });

        // One job (the one holding q0) fails as the job's own fault; the other two are answered.
        assertThat(run.run()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);

        String scrape = Scrapes.metrics(address);
        System.out.println("worker scrape:\n" + scrape);
        assertThat(value(scrape, "panoptes_worker_jobs_completed_total")).isEqualTo(2.0);
        assertThat(value(scrape, "panoptes_worker_jobs_failed_total", "scope=\"job\"")).isEqualTo(1.0);
        assertThat(value(scrape, "panoptes_worker_jobs_failed_total", "scope=\"transient\"")).isZero();
        assertThat(value(scrape, "panoptes_worker_jobs_running")).isZero();
        assertThat(value(scrape, "panoptes_model_call_seconds_count", "model=\"m\"")).isEqualTo(8.0);
        assertThat(value(scrape, "panoptes_model_tokens_total", "kind=\"completion\"")).isEqualTo(8 * 7.0);
        assertThat(value(scrape, "panoptes_worker_model_api_throttled_total")).isZero();
        assertThat(value(scrape, "panoptes_worker_reconnects_total")).isZero();
        assertThat(Scrapes.labelNames(scrape)).doesNotContain("job", "job_id");
        // The run is over and its coordinator gone: the worker says it is disconnected.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(value(Scrapes.metrics(address), "panoptes_worker_connected")).isZero());
        assertThat(coordinator.get()).isNotNull();
    }

    @Test
    void theConnectionGaugeAndReconnectsCounterStillReadAfterACollection() {
        WorkerMetrics metrics = new WorkerMetrics();
        AtomicBoolean connected = new AtomicBoolean(true);
        AtomicLong connections = new AtomicLong(3);
        // Lambdas nothing else holds: Micrometer once held them weakly, and after a collection the
        // gauge read NaN while the worker was registered.
        metrics.watchConnection(() -> connected.get(), () -> connections.get());
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        assertThat(metrics.registry().get("panoptes.worker.connected").gauge().value()).isEqualTo(1.0);
        assertThat(metrics.registry().get("panoptes.worker.reconnects").functionCounter().count()).isEqualTo(2.0);
        connected.set(false);
        assertThat(metrics.registry().get("panoptes.worker.connected").gauge().value()).isZero();
    }

    @Test
    void theMetricsOptionReachesTheWorkersSettings() {
        AtomicReference<WorkerSettings> started = new AtomicReference<>();
        int code = WorkerMain.newCommandLine(Map.of(), settings -> {
            started.set(settings);
            return 0;
        }).execute("--coordinator", "127.0.0.1:7070", "--model-api", "http://127.0.0.1:8000/v1", "--model", "m",
                "--metrics", "127.0.0.1:0");
        assertThat(code).isZero();
        assertThat(started.get().metrics().getPort()).isZero();
        assertThat(started.get().metrics().getHostString()).isEqualTo("127.0.0.1");
        assertThat(started.get().startupLine()).contains("metrics on 127.0.0.1:0");
    }

    private static JobRunner runner() {
        return job -> {
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                if (v.id().equals("q0")) {
                    throw new JobFailedException("vignette q0 is refused by the test's model");
                }
                records.add(new ResponseRecord(v.id(), v.expected(), "m", "stop", 12L, new Usage(5, 7)));
            }
            return new JobOutcome(job.id(), records);
        };
    }

    /** 12 vignettes in jobs of 4: 3 jobs for model m. */
    private CoordinatorSettings settings() throws Exception {
        Path suite = QuestionSuite.write(dir, 12);
        return new CoordinatorSettings(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), suite,
                dir.resolve("r.db"), 4, "", null, SpecParams.NONE, 3, Duration.ofSeconds(30), Duration.ofMillis(200),
                Duration.ofSeconds(2), null, List.of("m"), "exact", 1, null, null);
    }
}

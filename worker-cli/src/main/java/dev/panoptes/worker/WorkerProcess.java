package dev.panoptes.worker;

import dev.panoptes.admin.AdminServer;
import dev.panoptes.admin.WorkerMetrics;
import dev.panoptes.console.Durations;
import dev.panoptes.console.Logging;
import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.RequestPermits;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.eval.http.ModelApiCheck;
import dev.panoptes.eval.SandboxCalls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.TimeUnit;

/**
 * The worker as a process: builds the model client and the reconnect loop from
 * {@link WorkerSettings}, checks the model API, runs the loop on the main thread, and turns
 * SIGTERM or SIGINT into a graceful drain followed by exit code 0.
 *
 * <p>Why a shutdown hook that halts: the JVM turns both signals into its shutdown sequence, and
 * a process that merely lets the hooks finish exits with 128 + the signal (143 for SIGTERM). The
 * hook therefore does the whole drain itself (the other threads keep running meanwhile), flushes
 * the logs, and calls {@link Runtime#halt(int) halt(0)}. Handling the signals directly would need
 * {@code sun.misc.Signal}, an internal API. The hook is in place from before the model API check,
 * so that a signal while the worker waits for its model server also ends it with 0.
 *
 * <p>The two ways the worker ends on its own each print one line, through the logger at ERROR,
 * and return an exit code: {@value #EXIT_MODEL_API_UNUSABLE} when the model API check
 * finds the API unusable as configured, {@value #EXIT_REJECTED} when the coordinator
 * rejects the registration for good.
 */
public final class WorkerProcess {
    /** The exit code when the model API is unusable as configured (a wrong URL, key or model). */
    public static final int EXIT_MODEL_API_UNUSABLE = 3;
    /** The exit code when the coordinator rejects the registration for good (token, protocol, TLS). */
    public static final int EXIT_REJECTED = 4;

    private static final Logger log = LoggerFactory.getLogger(WorkerProcess.class);

    private WorkerProcess() {
    }

    /**
     * Runs the worker until a shutdown signal, on the calling thread.
     *
     * @return 0 (after a signal the process halts with 0 from the shutdown hook before this
     *         returns), {@value #EXIT_MODEL_API_UNUSABLE} when the model API is unusable
     *         as configured, {@value #EXIT_REJECTED} when the coordinator rejected the
     *         registration for good
     * @throws IllegalArgumentException when the model client refuses a setting
     * @throws InterruptedException     when the calling thread is interrupted
     */
    public static int start(WorkerSettings settings) throws InterruptedException {
        // The sandboxes are checked at start and held open for the worker's life: a worker that
        // cannot build one has none, and each vignette that needs one fails as this worker's fault.
        // The check (a bubblewrap run) goes on beside the model client's start and the model API
        // check; the worker waits for its answer before it registers, so no job reaches it before
        // it knows whether it has sandboxes.
        try (WorkerSandboxes.Pending sandboxCheck = WorkerSandboxes.start(settings.workerId(), settings.sandboxes(),
                System.getenv("PATH"));
             HttpModelClient client = modelClient(settings);
             SandboxRunners runners = new SandboxRunners(client, settings, sandboxCheck)) {
            ModelApiProbe probe = settings.checkModelApi()
                    ? new ModelApiCheck(client, settings.models())::run : null;
            return serveUntilSignalled(settings, runners, probe);
        }
    }

    /**
     * Builds the worker's runner once the sandbox check has answered, and closes what it built.
     * On the main thread.
     */
    private static final class SandboxRunners implements Runners, AutoCloseable {
        private final HttpModelClient client;
        private final WorkerSettings settings;
        private final WorkerSandboxes.Pending sandboxCheck;
        private SandboxCalls sandboxed;

        SandboxRunners(HttpModelClient client, WorkerSettings settings, WorkerSandboxes.Pending sandboxCheck) {
            this.client = client;
            this.settings = settings;
            this.sandboxCheck = sandboxCheck;
        }

        @Override
        public AsyncJobRunner runner() throws InterruptedException {
            // Null sandboxes (none asked for, or the check failed): SandboxCalls then fails each
            // sandboxed vignette as this worker's fault and never runs a command outside one.
            sandboxed = new SandboxCalls(client, sandboxCheck.await());
            return new EvalJobRunner(client, new RequestPermits(settings.requests()), sandboxed);
        }

        @Override
        public void close() {
            if (sandboxed != null) {
                sandboxed.close();
            }
        }
    }

    /**
     * The model client a worker with these settings calls through: one keep-alive connection per
     * request in flight, so that no call waits for one. The caller closes it.
     *
     * @throws IllegalArgumentException when the client refuses a setting
     */
    public static HttpModelClient modelClient(WorkerSettings settings) {
        HttpModelClient.Builder builder = HttpModelClient.builder(settings.modelApi(), settings.model())
                .apiKey(settings.apiKey())
                .maxConnections(settings.requests());
        if (settings.requestTimeout() != null) {
            builder.requestTimeout(settings.requestTimeout());
        }
        return builder.build();
    }

    /**
     * The runner a worker with these settings runs its jobs with: every job's vignettes at once
     * within one budget of {@link WorkerSettings#requests()} requests in flight.
     */
    public static EvalJobRunner runner(HttpModelClient client, WorkerSettings settings) {
        return new EvalJobRunner(client, new RequestPermits(settings.requests()));
    }

    /**
     * Logs the startup line, checks the model API (unless {@code probe} is null) and runs the
     * loop, with a draining shutdown hook installed throughout.
     *
     * @param probe the model API check, or null to skip it
     * @return 0, {@value #EXIT_MODEL_API_UNUSABLE} or {@value #EXIT_REJECTED}
     *         as for {@link #start(WorkerSettings)}
     * @throws InterruptedException when the calling thread is interrupted
     */
    static int serveUntilSignalled(WorkerSettings settings, AsyncJobRunner runner, ModelApiProbe probe)
            throws InterruptedException {
        return serveUntilSignalled(settings, () -> runner, probe);
    }

    /**
     * As {@link #serveUntilSignalled(WorkerSettings, AsyncJobRunner, ModelApiProbe)}, the runner
     * made by {@code runners} after the model API check and before the worker registers.
     */
    static int serveUntilSignalled(WorkerSettings settings, Runners runners, ModelApiProbe probe)
            throws InterruptedException {
        if (settings.metrics() == null) {
            return serve(settings, runners, probe, null);
        }
        WorkerMetrics metrics = new WorkerMetrics();
        AdminServer admin;
        try {
            admin = AdminServer.start(settings.metrics(), metrics.registry(), null, settings.options().token(),
                    settings.metricsInsecure());
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        try (admin) {
            return serve(settings, () -> metrics.measure(runners.runner()), probe, metrics);
        }
    }

    private static int serve(WorkerSettings settings, Runners runners, ModelApiProbe probe,
                             WorkerMetrics metrics) throws InterruptedException {
        log.info(settings.startupLine());
        // The loop exists once the models it offers are known (the check may discover them); a
        // signal before that ends the process at once.
        AtomicReference<WorkerLoop> running = new AtomicReference<>();
        Thread hook = new Thread(() -> drainAndHalt(settings.workerId(), running.get(), settings.grace()),
                "worker-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            List<String> models = settings.models();
            if (probe != null) {
                ModelApiCheck.Result usable = awaitModelApi(settings.workerId(), probe,
                        new Backoff(settings.options().initialBackoff(), settings.options().maxBackoff()));
                if (usable == null) {
                    return EXIT_MODEL_API_UNUSABLE;
                }
                if (!usable.models().isEmpty()) {
                    models = usable.models();
                }
            }
            WorkerLoop loop = new WorkerLoop(settings.coordinators(), settings.workerId(), settings.capacity(),
                    runners.runner(), settings.options().withModels(models));
            running.set(loop);
            if (metrics != null) {
                metrics.watchConnection(loop::isConnected, loop::connectionCount);
            }
            loop.runForever();
        } catch (RegistrationRejectedException e) {
            // The loop has stopped without a word: this is the one line about it.
            log.error("worker={} - coordinator {} rejected this worker for good: {}. Exiting with code {}",
                    settings.workerId(), Workers.describe(settings.coordinator()), e.reason(), EXIT_REJECTED);
            return EXIT_REJECTED;
        } catch (CoordinatorSpeaksTlsException e) {
            log.error("worker={} - {}. Exiting with code {}", settings.workerId(), e.getMessage(),
                    EXIT_REJECTED);
            return EXIT_REJECTED;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shutdownInProgress) {
                // The hook is running: it owns the exit (and its code) from here on.
                log.debug("shutdown in progress; the shutdown hook finishes the drain and exits");
            }
        }
        return 0;
    }

    /**
     * Asks the model API until it answers OK or FATAL, waiting with {@code backoff} after each
     * TRANSIENT answer (a model server still loading its weights, or not started yet). Logs one
     * line per answer: INFO for OK, ERROR for FATAL, WARN for TRANSIENT. Runs on the caller's
     * thread.
     *
     * @return true when the API is usable, false when it is not as configured
     * @throws InterruptedException when the calling thread is interrupted, while asking or waiting
     */
    static boolean awaitUsableModelApi(String workerId, ModelApiProbe probe, Backoff backoff)
            throws InterruptedException {
        return awaitModelApi(workerId, probe, backoff) != null;
    }

    /** As {@link #awaitUsableModelApi}: the OK result (with the models served), or null for FATAL. */
    static ModelApiCheck.Result awaitModelApi(String workerId, ModelApiProbe probe, Backoff backoff)
            throws InterruptedException {
        Objects.requireNonNull(probe, "probe");
        while (true) {
            ModelApiCheck.Result result = probe.check();
            switch (result.verdict()) {
                case OK:
                    log.info("worker={} - {}", workerId, result.message());
                    return result;
                case FATAL:
                    // A line that ends in a question ("did you mean ...?") takes no full stop after it.
                    log.error("worker={} - the model API check failed: {}{} Exiting with code {} without registering",
                            workerId, result.message(), result.message().endsWith("?") ? "" : ".",
                            EXIT_MODEL_API_UNUSABLE);
                    return null;
                default:
                    Duration delay = backoff.next();
                    log.warn("worker={} - the model API is not ready: {}; checking again in {}ms", workerId,
                            result.message(), delay.toMillis());
                    TimeUnit.MILLISECONDS.sleep(delay.toMillis());
            }
        }
    }

    /** Runs on the shutdown hook's thread, while every other thread still runs. */
    private static void drainAndHalt(String workerId, WorkerLoop loop, Duration grace) {
        if (loop == null) {
            log.info("worker={} - shutdown signal received before registering; exiting", workerId);
            Logging.flushAndStop();
            Runtime.getRuntime().halt(0);
            return;
        }
        try {
            log.info("worker={} - shutdown signal received; draining (grace {})", loop.workerId(),
                    Durations.format(grace));
            if (loop.drain(grace)) {
                log.info("worker={} - stopped cleanly, no job left unanswered; exiting", loop.workerId());
            } else {
                log.warn("worker={} - exiting with jobs unanswered; the coordinator redelivers them", loop.workerId());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("worker={} - drain interrupted; exiting", loop.workerId());
        } catch (RuntimeException e) {
            log.error("worker={} - drain failed; exiting", loop.workerId(), e);
        } finally {
            // A requested shutdown is a clean exit even when jobs had to be abandoned: the
            // coordinator redelivers them, and supervisors should not restart-loop the worker.
            Logging.flushAndStop();
            Runtime.getRuntime().halt(0);
        }
    }

    /** Makes the worker's runner, once, just before it registers (on the main thread). */
    @FunctionalInterface
    interface Runners {
        /**
         * The runner the worker's jobs run on.
         *
         * @throws InterruptedException when the calling thread is interrupted while it waits
         *                              (for the sandbox check)
         */
        AsyncJobRunner runner() throws InterruptedException;
    }

    /** One run of the model API check; {@link ModelApiCheck#run()} in production, a script in tests. */
    @FunctionalInterface
    interface ModelApiProbe {
        /**
         * Asks the model API once.
         *
         * @throws InterruptedException when the calling thread is interrupted
         */
        ModelApiCheck.Result check() throws InterruptedException;
    }
}

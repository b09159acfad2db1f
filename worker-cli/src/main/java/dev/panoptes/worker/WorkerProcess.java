package dev.panoptes.worker;

import dev.panoptes.control.JobRunner;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.HttpModelClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * The worker as a process: builds the model client and the reconnect loop from
 * {@link WorkerSettings}, runs the loop on the main thread, and turns SIGTERM or SIGINT into a
 * graceful drain followed by exit code 0.
 *
 * <p>Why a shutdown hook that halts: the JVM turns both signals into its shutdown sequence, and
 * a process that merely lets the hooks finish exits with 128 + the signal (143 for SIGTERM). The
 * hook therefore does the whole drain itself (the other threads keep running meanwhile), flushes
 * the logs, and calls {@link Runtime#halt(int) halt(0)}. Handling the signals directly would need
 * {@code sun.misc.Signal}, an internal API.
 *
 * <p>A coordinator that rejects the registration for good ends the worker: one line, through the
 * logger at ERROR, with the coordinator's reason, and exit code {@value WorkerMain#EXIT_REJECTED}.
 */
final class WorkerProcess {
    private static final Logger log = LoggerFactory.getLogger(WorkerProcess.class);

    private WorkerProcess() {
    }

    /**
     * Runs the worker until a shutdown signal, on the calling thread.
     *
     * @return 0 (after a signal the process halts with 0 from the shutdown hook before this
     *         returns), {@value WorkerMain#EXIT_REJECTED} when the coordinator rejected the
     *         registration for good
     * @throws IllegalArgumentException when the model client refuses a setting
     * @throws InterruptedException     when the calling thread is interrupted
     */
    static int start(WorkerSettings settings) throws InterruptedException {
        HttpModelClient.Builder builder = HttpModelClient.builder(settings.modelApi(), settings.model())
                .apiKey(settings.apiKey());
        if (settings.requestTimeout() != null) {
            builder.requestTimeout(settings.requestTimeout());
        }
        try (HttpModelClient client = builder.build()) {
            return serveUntilSignalled(settings, new EvalJobRunner(client));
        }
    }

    /**
     * Logs the startup line and runs the loop with a draining shutdown hook installed.
     *
     * @return 0, or {@value WorkerMain#EXIT_REJECTED} as for {@link #start(WorkerSettings)}
     * @throws InterruptedException when the calling thread is interrupted
     */
    static int serveUntilSignalled(WorkerSettings settings, JobRunner runner) throws InterruptedException {
        log.info(settings.startupLine());
        WorkerLoop loop = new WorkerLoop(settings.coordinator(), settings.workerId(), settings.capacity(), runner,
                settings.options());
        Thread hook = new Thread(() -> drainAndHalt(loop, settings.grace()), "worker-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            loop.runForever();
        } catch (RegistrationRejectedException e) {
            // The loop has stopped without a word: this is the one line about it.
            log.error("worker={} - coordinator {} rejected this worker for good: {}. Exiting with code {}",
                    settings.workerId(), Workers.describe(settings.coordinator()), e.reason(), WorkerMain.EXIT_REJECTED);
            return WorkerMain.EXIT_REJECTED;
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

    /** Runs on the shutdown hook's thread, while every other thread still runs. */
    private static void drainAndHalt(WorkerLoop loop, Duration grace) {
        try {
            log.info("worker={} - shutdown signal received; draining (grace {})", loop.workerId(),
                    DurationConverter.format(grace));
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
}

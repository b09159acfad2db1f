package dev.panoptes.worker;

import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteReader;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * One run of the {@code coordinator} command: load and plan the suite, open the store, listen
 * for workers, schedule every job, print progress and the summary. Separate from the picocli
 * command so that the demo and the tests drive the same code.
 *
 * <p>Runs on the calling thread; interrupting that thread stops the run cleanly, keeping what
 * was stored.
 */
final class CoordinatorRun {
    private static final Logger log = LoggerFactory.getLogger(CoordinatorRun.class);

    /** Exit code when the run ended with jobs that failed for good. */
    static final int EXIT_INCOMPLETE = 3;
    /** Exit code when the run was interrupted (Ctrl-C), as shells report SIGINT. */
    static final int EXIT_INTERRUPTED = 130;
    /** Exit code when the run stopped because the coordinator itself failed (its worker server died). */
    static final int EXIT_FAILED = 1;

    private final CoordinatorSettings settings;
    private final PrintWriter out;
    private final PrintWriter err;
    private final boolean terminal;
    private final String workerCommand;
    private Consumer<InetSocketAddress> onListening = address -> { };
    private final List<ProgressListener> extraListeners = new ArrayList<>();
    private volatile RunSummary summary;
    /** The console while the run is on, else null. */
    private volatile ProgressPrinter console;

    /**
     * @param workerCommand how a user starts a worker, printed with the listening address
     *                      appended, e.g. {@code java -jar worker.jar}
     */
    CoordinatorRun(CoordinatorSettings settings, PrintWriter out, PrintWriter err, boolean terminal,
                   String workerCommand) {
        this.settings = settings;
        this.out = out;
        this.err = err;
        this.terminal = terminal;
        this.workerCommand = workerCommand;
    }

    /** Called with the bound address once the server listens (the demo starts its workers there). */
    CoordinatorRun onListening(Consumer<InetSocketAddress> callback) {
        this.onListening = callback;
        return this;
    }

    /** Also tells this listener of the run's progress, on the scheduler's thread. */
    CoordinatorRun alsoNotify(ProgressListener listener) {
        extraListeners.add(listener);
        return this;
    }

    /** The summary of the finished run, or null before the run ends. */
    RunSummary summary() {
        return summary;
    }

    /**
     * Runs to the end, holding the database's {@link DatabaseLock} throughout.
     *
     * @return 0 when every job completed, {@link #EXIT_INCOMPLETE} when some failed,
     *         {@link #EXIT_INTERRUPTED} when the thread was interrupted
     * @throws SuiteFormatException        when the suite has problems (nothing ran)
     * @throws DatabaseLock.InUseException when another coordinator uses the database (nothing was
     *                                     read, bound or written)
     * @throws IOException                 when the suite cannot be read or the address not bound
     */
    int run() throws IOException, SuiteFormatException {
        // First of all, so that a refused run prints only the refusal, binds no port and neither
        // creates nor touches the database; released however the run ends.
        try (DatabaseLock lock = DatabaseLock.acquire(settings.db(), settings.listen())) {
            return runLocked(lock);
        }
    }

    private int runLocked(DatabaseLock lock) throws IOException, SuiteFormatException {
        Suite suite = new SuiteReader().read(settings.suite());
        JobPlan plan = JobPlan.of(suite, settings.params(), settings.jobSize(), settings.label());
        SharedPool pool = new SharedPool();
        FleetReporter fleet;
        // Everything for the console goes through the printer's own thread from here on: a
        // console that stops taking output must not stall the run.
        // The server binds before the store opens, so that an address in use or a host that does
        // not resolve leaves no empty database behind.
        try (ProgressPrinter progress = console = new ProgressPrinter(err, terminal, pool);
             WorkerServer server = WorkerServer.start(serverOptions(), pool, fleet = new FleetReporter(progress));
             ResultStore store = JdbcResultStore.openSqlite(settings.db())) {
            progress.message(String.format(Locale.ROOT, "suite %s: %d vignettes in %d jobs of up to %d (run %s)",
                    settings.suite(), plan.vignetteCount(), plan.jobs().size(), settings.jobSize(), plan.runId()));
            InetSocketAddress address = server.address();
            lock.listening(address);
            progress.message("listening for workers on " + hostPort(address) + "; results go to " + settings.db()
                    + "; each attempt of a job may take " + DurationConverter.format(settings.jobTimeout())
                    + " (--job-timeout)");
            progress.message("start workers with:\n  " + workerCommand + " --coordinator " + hostPort(address)
                    + " --model-api URL --model NAME" + (settings.token() == null ? "" : " --token \"$PANOPTES_TOKEN\""));
            onListening.accept(address);
            SchedulerOptions options = SchedulerOptions.defaults()
                    .withMaxAttempts(settings.maxAttempts())
                    .withWaitForWorkers(settings.waitForWorkers())
                    .withJobTimeout(settings.jobTimeout())
                    .withListener(fanOut(progress, fleet, address));
            RunReport report;
            try {
                report = new Scheduler(pool, store, options).run(plan.jobs());
            } catch (InterruptedException e) {
                progress.message("interrupted: " + store.recordCount() + " records are kept in " + settings.db()
                        + "; run the same command again to resume");
                return EXIT_INTERRUPTED;
            } catch (WorkerSourceFailedException e) {
                progress.message("the run stopped: " + e.getCause().getMessage() + "; " + store.recordCount()
                        + " records are kept in " + settings.db() + "; run the same command again to resume");
                log.debug("the worker server failed", e);
                return EXIT_FAILED;
            }
            progress.finish();
            fleet.quiet();
            summary = RunSummary.of(plan, report, store);
            out.print(summary.render());
            out.flush();
            return summary.allCompleted() ? 0 : EXIT_INCOMPLETE;
        } finally {
            console = null;
        }
    }

    /**
     * Prints a line on the run's console: through the progress printer while the run is on
     * (never blocking), straight to standard error otherwise. Any thread.
     */
    void say(String text) {
        ProgressPrinter printer = console;
        if (printer != null) {
            printer.message(text);
        } else {
            err.println(text);
            err.flush();
        }
    }

    private ServerOptions serverOptions() {
        ServerOptions.Builder b = ServerOptions.builder()
                .bind(settings.listen())
                .token(settings.token())
                .heartbeatInterval(settings.heartbeatInterval())
                // The scheduler's callback only queues an event for its own thread: it never blocks.
                .directCompletions(true);
        if (settings.heartbeatTimeout() != null) {
            b.heartbeatTimeout(settings.heartbeatTimeout());
        }
        return b.build();
    }

    private ProgressListener fanOut(ProgressPrinter progress, FleetReporter fleet, InetSocketAddress address) {
        List<ProgressListener> all = new ArrayList<>();
        all.add(progress);
        all.add(new ProgressListener() {
            @Override
            public void onWaitingForWorkers(Duration waited) {
                progress.message("no worker connected for " + waited.toSeconds() + " s; are workers pointed at "
                        + hostPort(address) + "?" + fleet.rejectionsNote());
            }
        });
        all.addAll(extraListeners);
        return ProgressListener.fanOut(all);
    }

    static String hostPort(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }
}

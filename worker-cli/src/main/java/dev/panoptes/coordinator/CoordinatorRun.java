package dev.panoptes.coordinator;

import dev.panoptes.admin.CoordinatorAdmin;
import dev.panoptes.console.Durations;
import dev.panoptes.control.Job;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.WorkerSourceFailedException;
import dev.panoptes.control.cache.CachePlan;
import dev.panoptes.control.cache.CachePolicy;
import dev.panoptes.control.cache.ResponseCache;
import dev.panoptes.control.cost.BudgetReachedException;
import dev.panoptes.control.cost.CostBudget;
import dev.panoptes.control.schedule.DispatchGate;
import dev.panoptes.control.schedule.EndpointGovernor;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.schedule.StoreUnavailableException;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoreFencedException;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.RunStop;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteSubset;
import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.remote.ServerOptions;
import dev.panoptes.remote.SharedPool;
import dev.panoptes.remote.WorkerServer;
import dev.panoptes.report.LiveFigures;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One run of the {@code coordinator} command: load and plan the suite, open the store, listen
 * for workers, schedule every job, print progress and the summary. Separate from the picocli
 * command so that the demo and the tests drive the same code; the words it prints are
 * {@link RunLines}', the locks {@link StoreLock}'s, the grading {@link JudgePhase}'s. Its workers
 * connect to its worker server, or one runs in this process ({@link #withInProcessWorker}). It
 * runs past 500 lines because the run's sequence, with every way a run ends, is one idea that
 * reads best in one place.
 *
 * <p>Over 500 lines because the run's one sequence (lock, plan, listen, serve from the cache,
 * schedule, grade, summarise, and each way it can stop) reads best in one place beside the setters
 * that configure it; what each step says or decides lives in the classes named above and in
 * {@link RunEnding}.
 *
 * <p>Configured, then {@link #run()}, on one thread; interrupting it stops the run cleanly, keeping
 * what was stored. {@link #say} may be called from any thread.
 */
public final class CoordinatorRun {
    private static final Logger log = LoggerFactory.getLogger(CoordinatorRun.class);

    /** Exit code when the run ended with jobs that failed for good (or answers left ungraded). */
    public static final int EXIT_INCOMPLETE = 3;
    /** Exit code when every job completed but failed answers are more than {@link RunGates#withMaxErrorRate} allows. */
    public static final int EXIT_ERROR_RATE = 5;
    /** Exit code when every job completed but a model's accuracy is below {@link RunGates#withFailUnder}. */
    public static final int EXIT_FAIL_UNDER = 6;
    /** Exit code when the cost budget ({@link RunGates#withMaxCost}) stopped the run before every job was sent. */
    public static final int EXIT_BUDGET = 7;
    /** Exit code when the run was interrupted (Ctrl-C), as shells report SIGINT. */
    public static final int EXIT_INTERRUPTED = 130;
    /**
     * Exit code when answers were left to ask and the {@link ModelGate} refused the models (their
     * API is unreachable); what the cache served is stored.
     */
    public static final int EXIT_MODEL_API_UNUSABLE = 8;
    /**
     * Exit code when the run stopped because the coordinator itself failed (its worker server
     * died, or its result store took no write for too long).
     */
    static final int EXIT_FAILED = 1;
    /**
     * Exit code when the run stopped because its lock was lost mid-run (PostgreSQL: the session
     * holding the run ended or stopped answering), so that another coordinator may take the run.
     */
    static final int EXIT_LOCK_LOST = 4;
    /**
     * Exit code when another coordinator (a standby) took the run over while this one lived: its
     * writes were fenced ({@link StoreFencedException}), and it stored nothing after the takeover.
     */
    public static final int EXIT_FENCED = 9;
    /** How often the run's lock is re-verified, unless {@link #withLockCheck} says otherwise. */
    static final Duration LOCK_CHECK_INTERVAL = Duration.ofSeconds(5);
    /** How long one check may wait for the database, unless {@link #withLockCheck} says otherwise. */
    static final Duration LOCK_CHECK_TIMEOUT = Duration.ofSeconds(5);

    private final CoordinatorSettings settings;
    private final PrintWriter out;
    private final PrintWriter err;
    private final boolean terminal;
    private final String workerCommand;
    private Consumer<InetSocketAddress> onListening = address -> { };
    private final List<ProgressListener> extraListeners = new ArrayList<>();
    /** The fleet's concurrency per model API; null when not governed. */
    private EndpointGovernor governor = new EndpointGovernor(0);
    /** Where results go; null for the SQLite file {@code settings.db()}. */
    private DatabaseTarget database;
    /** Where to serve /metrics and /status; null for nowhere. */
    private InetSocketAddress adminBind;
    /** --metrics-insecure: serve the admin endpoint beyond loopback without a token. */
    private boolean adminOpenBeyondLoopback;
    /** The TLS context workers connect with; null for plaintext. */
    private SSLContext tlsContext;
    private boolean tlsClientCertificates;
    /** The CA file to name in the "start workers with" hint. */
    private String tlsCaForWorkers;
    /** The admin endpoint once started; it outlives the run until {@link #closeAdmin()}. */
    private volatile CoordinatorAdmin admin;
    private volatile RunSummary summary;
    /** Whether the summary's figures were counted as the answers were stored (not read back). */
    private volatile boolean summaryCountedAsStored;
    /** The console while the run is on, else null. */
    private volatile ProgressPrinter console;
    private Duration lockCheckInterval = LOCK_CHECK_INTERVAL;
    private Duration lockCheckTimeout = LOCK_CHECK_TIMEOUT;
    /** --standby: wait for the run's lock instead of being refused. */
    private boolean standby;
    /** Where the worker server binds: {@code settings.listen()}, or the port a standby answered on. */
    private InetSocketAddress listenAt;
    /** The error rate, accuracy floor, prices, budget and summary JSON the run is held to. */
    private RunGates gates = RunGates.NONE;
    /** The frame limit on the worker protocol (--max-frame-bytes). */
    private int maxFrameBytes = MessageCodec.DEFAULT_MAX_FRAME_BYTES;
    /** The vignettes asked (--limit, --sample-id, --shuffle); part of the run's identity. */
    private SuiteSubset subset = SuiteSubset.ALL;
    /** When answers the database holds are served instead of asking a model (--no-cache, --cache-max-age). */
    private CachePolicy cache = CachePolicy.defaults();
    private boolean retryFailed;
    /** The one worker in this process, instead of a worker server; null for a fleet. */
    private WorkerHandle inProcessWorker;
    /** Why the in-process worker refuses jobs for good, or null while it does not (see {@link SoleWorkerQuarantine}). */
    private Supplier<String> inProcessRefusal = () -> null;
    /** Asked before any model is, once the cache has served; null to ask the models without asking it. */
    private ModelGate modelGate;

    /**
     * @param workerCommand how a user starts a worker, printed with the listening address
     *                      appended, e.g. {@code java -jar worker.jar}
     */
    public CoordinatorRun(CoordinatorSettings settings, PrintWriter out, PrintWriter err, boolean terminal,
                   String workerCommand) {
        this.settings = settings;
        this.out = out;
        this.err = err;
        this.terminal = terminal;
        this.workerCommand = workerCommand;
    }

    /** Called with the bound address once the server listens (the demo starts its workers there). */
    public CoordinatorRun onListening(Consumer<InetSocketAddress> callback) {
        this.onListening = callback;
        return this;
    }

    /**
     * Serves workers over TLS (off by default); validated by the caller.
     *
     * @param context                  the coordinator's certificate and key, and the client CA
     * @param requireClientCertificate mutual TLS: workers must present a certificate of the client CA
     * @param caForWorkers             the file workers should pass as {@code --tls-ca}, for the
     *                                 "start workers with" hint
     */
    public CoordinatorRun withTls(SSLContext context, boolean requireClientCertificate, String caForWorkers) {
        this.tlsContext = context;
        this.tlsClientCertificates = requireClientCertificate;
        this.tlsCaForWorkers = caForWorkers;
        return this;
    }

    /** As {@link RunGates#withMaxErrorRate} on this run's gates. */
    public CoordinatorRun withMaxErrorRate(double rate) {
        this.gates = gates.withMaxErrorRate(rate);
        return this;
    }

    /**
     * Holds the run to these gates (error rate, accuracy floor, cost budget) and reports its cost
     * and summary JSON as they say; replaces the gates set before (a {@link #withMaxErrorRate} too).
     *
     * @throws IllegalArgumentException naming the models the budget needs a price for and that have none
     */
    public CoordinatorRun withGates(RunGates value) {
        List<String> unpriced = value.unpricedUnderBudget(settings.models());
        if (!unpriced.isEmpty()) {
            throw new IllegalArgumentException("a cost budget needs a price for every model of the run; none for "
                    + String.join(", ", unpriced) + " (give --price MODEL=IN/OUT or --prices FILE)");
        }
        this.gates = value;
        return this;
    }

    /** Asks only this subset of the suite, a run of its own (default: the whole suite); validated by the caller. */
    public CoordinatorRun withSubset(SuiteSubset subset) {
        this.subset = subset;
        return this;
    }

    /** The frame limit of the worker protocol, in bytes (default 16 MiB); validated by the caller. */
    public CoordinatorRun withMaxFrameBytes(int bytes) {
        this.maxFrameBytes = bytes;
        return this;
    }

    /**
     * Whether a resume asks again the vignettes whose stored answer is a failed one, each new
     * answer replacing the failed one ({@link FailedAnswerRetry}); off by default.
     */
    public CoordinatorRun withRetryFailed(boolean retry) {
        this.retryFailed = retry;
        return this;
    }

    /** When the run serves requests from the answers its database holds ({@link ResponseCache}); on by default. */
    public CoordinatorRun withCache(CachePolicy policy) {
        this.cache = java.util.Objects.requireNonNull(policy, "policy");
        return this;
    }

    /**
     * Governs the fleet's concurrency against each model API (additive increase, multiplicative
     * decrease on the 429s workers report), or not.
     *
     * @param ceiling the most jobs in flight against one API; 0 for none
     */
    public CoordinatorRun withRateGovernor(boolean enabled, int ceiling) {
        this.governor = enabled ? new EndpointGovernor(ceiling) : null;
        return this;
    }

    /**
     * Runs every job on this worker, in this process (the {@code eval} command: one machine, one
     * command), instead of listening for workers: no socket, no token, no TLS; the same scheduler,
     * store, locks and summary. The worker joins once the run is planned and the store open; the
     * caller owns it (closes it after {@link #run()}). Nothing is framed on the way to it, so no
     * vignette is too big to send (the frame limit is lifted). Call before {@link #run()}.
     *
     * @param worker an in-process worker, such as {@link ModelApiWorker#handle()}
     */
    public CoordinatorRun withInProcessWorker(WorkerHandle worker) {
        this.inProcessWorker = Objects.requireNonNull(worker, "worker");
        this.maxFrameBytes = Integer.MAX_VALUE;
        return this;
    }

    /**
     * As {@link #withInProcessWorker(WorkerHandle)}, with what says the worker refuses jobs for
     * good (null while it does not): no other worker can connect, so at the first job it fails
     * while it refuses for good, or once it is quarantined again after its probation, the run
     * stops keeping what was stored and returns {@link #EXIT_MODEL_API_UNUSABLE} instead of
     * waiting for a worker. {@code refusesForGood} is asked on the scheduler's thread.
     */
    public CoordinatorRun withInProcessWorker(WorkerHandle worker, Supplier<String> refusesForGood) {
        this.inProcessRefusal = Objects.requireNonNull(refusesForGood, "refusesForGood");
        return withInProcessWorker(worker);
    }


    /**
     * Asks {@code gate} whether the models may be asked once the response cache has served what it
     * holds, if any answer is left to ask; when it refuses, the run stops there (what the cache
     * served is stored) and returns {@link #EXIT_MODEL_API_UNUSABLE}. A run the cache answers
     * whole never asks it. Call before {@link #run()}.
     */
    public CoordinatorRun withModelGate(ModelGate gate) {
        this.modelGate = Objects.requireNonNull(gate, "gate");
        return this;
    }

    /**
     * Stores results in this database (a SQLite file or a shared PostgreSQL database) instead of
     * the SQLite file {@code settings.db()}.
     */
    public CoordinatorRun withDatabase(DatabaseTarget target) {
        this.database = target;
        return this;
    }

    /**
     * How often the run's lock is re-verified while the run is on, and how long one check may wait
     * for the database (see {@link StoreLock#watch}); 5 s and 5 s by default. Only a PostgreSQL
     * run lock is checked. Call before {@link #run()}, on the thread that runs it.
     *
     * @throws IllegalArgumentException when a duration is not positive
     */
    CoordinatorRun withLockCheck(Duration interval, Duration timeout) {
        if (interval.isNegative() || interval.isZero() || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the lock check's interval and timeout must be positive, not "
                    + interval + " and " + timeout);
        }
        this.lockCheckInterval = interval;
        this.lockCheckTimeout = timeout;
        return this;
    }

    /**
     * The run's lock lease: a coordinator that stops checking its lock (frozen, cut off) for this
     * long loses it, and a standby may take the run over. The lock is checked every third of it,
     * each check waiting at most a third, so that a holder cut off from the database stops before
     * its lease ends; 15 s by default. Call before {@link #run()}.
     *
     * @throws IllegalArgumentException when it is shorter than 3 ms
     */
    public CoordinatorRun withLockLease(Duration lease) {
        if (lease.toMillis() < 3) {
            throw new IllegalArgumentException("the lock lease must be at least 3 ms, not " + lease);
        }
        return withLockCheck(lease.dividedBy(3), lease.dividedBy(3));
    }

    /**
     * A standby coordinator (PostgreSQL only): when another coordinator holds the run, waits for
     * its lock to end and then takes the run over from the store, instead of being refused (see
     * {@link Standby}). Call before {@link #run()}.
     */
    public CoordinatorRun asStandby() {
        this.standby = true;
        return this;
    }

    /** Where results go. */
    DatabaseTarget database() {
        return database != null ? database : new DatabaseTarget.Sqlite(settings.db());
    }

    /**
     * Serves the admin endpoint on {@code bind} ({@code GET /metrics} and {@code GET /status},
     * both behind the workers' token when there is one) from the moment the suite is planned. It
     * stays up after {@link #run()} returns, so that the last figures can be read, until
     * {@link #closeAdmin()}. Without a token, only on a loopback address.
     *
     * @param bind where to listen, or null for no endpoint
     */
    public CoordinatorRun withAdmin(InetSocketAddress bind) {
        return withAdmin(bind, false);
    }

    /**
     * As {@link #withAdmin(InetSocketAddress)}; {@code openBeyondLoopback} (--metrics-insecure)
     * also serves it without a token on an address other machines reach.
     */
    public CoordinatorRun withAdmin(InetSocketAddress bind, boolean openBeyondLoopback) {
        this.adminBind = bind;
        this.adminOpenBeyondLoopback = openBeyondLoopback;
        return this;
    }

    /** The admin endpoint's address once it listens, else null. Any thread. */
    public InetSocketAddress adminAddress() {
        CoordinatorAdmin a = admin;
        return a == null ? null : a.address();
    }

    /** The run is over, however it ended: the admin endpoint's status view says so. Any thread. */
    public void adminFinished() {
        CoordinatorAdmin a = admin;
        if (a != null) {
            a.finished();
        }
    }

    /** Stops the admin endpoint, if it runs; idempotent. */
    public void closeAdmin() {
        CoordinatorAdmin a = admin;
        admin = null;
        if (a != null) {
            a.close();
        }
    }

    /** Also tells this listener of the run's progress, on the scheduler's thread. */
    public CoordinatorRun alsoNotify(ProgressListener listener) {
        extraListeners.add(listener);
        return this;
    }

    /** The summary of the finished run, or null before the run ends. */
    RunSummary summary() {
        return summary;
    }

    /**
     * True when the finished run's summary counted its answers as they were stored
     * ({@link LiveFigures}), false when it read them back from the store (a resumed or graded run).
     */
    boolean summaryCountedAsStored() {
        return summaryCountedAsStored;
    }

    /**
     * Runs to the end, holding the database's {@link DatabaseLock} throughout (SQLite: one
     * coordinator per file), or the run's {@link PostgresRunLock} (PostgreSQL: one coordinator per
     * run, taken once the suite is planned).
     *
     * <p>A run lock that is lost mid-run (see {@link StoreLock#watch}) stops the run as a failed
     * worker server does: nothing more is written, what was stored is kept, and one line on the
     * console says what was lost, why, and how to resume.
     *
     * @return 0 when every job completed and the {@link RunGates} pass, {@link #EXIT_INCOMPLETE}
     *         when some failed, {@link #EXIT_BUDGET}, {@link #EXIT_ERROR_RATE} or
     *         {@link #EXIT_FAIL_UNDER} as {@link RunEnding} decides, {@link #EXIT_INTERRUPTED} when the thread was interrupted, {@link #EXIT_FAILED} when
     *         the worker server failed, {@link #EXIT_LOCK_LOST} when the run's lock was lost
     * @throws SuiteFormatException        when the suite has problems (nothing ran)
     * @throws SuiteSubset.UnknownIdsException when the subset names ids the suite lacks (nothing ran)
     * @throws DatabaseLock.InUseException when another coordinator uses the database (nothing was
     *                                     read, bound or written)
     * @throws PostgresRunLock.InUseException when another coordinator runs the same run in the
     *                                     PostgreSQL database (nothing was bound or written)
     * @throws IOException                 when the suite cannot be read or the address not bound
     */
    public int run() throws IOException, SuiteFormatException {
        // First of all, so that a refused run prints only the refusal, binds no port and neither
        // creates nor touches the database; released however the run ends.
        DatabaseTarget target = database();
        try (StoreLock lock = target.lockDatabase(settings.listen())) {
            return runLocked(target, lock);
        } catch (IOException | SuiteFormatException | RuntimeException | Error e) {
            closeAdmin();
            throw e;
        }
    }

    private int runLocked(DatabaseTarget target, StoreLock lock) throws IOException, SuiteFormatException {
        RunScoring scoring = new RunScoring(settings.scorer());
        PlannedRun planned = PlannedRun.of(settings, subset);
        Suite suite = planned.suite();
        RunManifest manifest = planned.manifest();
        JobPlan plan = planned.plan();
        // Before anything is bound or written: a vignette that can never be sent is named now.
        FrameLimitCheck frames = FrameLimitCheck.of(plan, suite, maxFrameBytes);
        frames.report(err);
        if (adminBind != null) {
            admin = CoordinatorAdmin.start(adminBind, settings.token(), adminOpenBeyondLoopback, plan.runId(),
                    settings.suite().toString(), settings.models(), settings.scorer(), settings.epochs());
        }
        SharedPool pool = new SharedPool();
        FleetReporter fleet;
        WorkerEventCounter events = new WorkerEventCounter();
        // From here on the console is the printer's own thread: a stalled console never stalls the run.
        // The server binds before the store opens, so that an address in use or a host that does
        // not resolve leaves no empty database behind.
        // On PostgreSQL, coordinators share the database but not a run: refused before anything is bound.
        StoreLock held;
        if (standby) {
            Standby.Taken taken = Standby.await(target, plan.runId(), settings.listen(),
                    inProcessWorker == null && tlsContext == null, this::say);
            if (taken == null) {
                say("interrupted on standby for run " + plan.runId() + "; nothing was stored");
                return EXIT_INTERRUPTED;
            }
            held = taken.lock();
            listenAt = taken.bound();
        } else {
            held = target.lockRun(plan.runId(), settings.listen());
        }
        try (StoreLock runLock = held;
             ProgressPrinter progress = console = new ProgressPrinter(err, terminal, pool);
             WorkerServer server = startServer(pool, fleet = new FleetReporter(progress).governedBy(governor));
             JdbcResultStore store = target.open().withScoring(scoring)) {
            if (runLock.epoch() > 0) {
                // A coordinator that took this run over after us (a standby) fences every write of
                // ours from then on; a write may idle in its transaction no longer than the lease.
                store.fencedBy(plan.runId(), runLock.epoch(),
                        3 * Math.max(lockCheckInterval.toMillis(), lockCheckTimeout.toMillis()));
            }
            AtomicReference<StoreLock.LostException> lockLost = new AtomicReference<>();
            // Only the run lock can vanish while this process lives (SQLite's OS lock cannot). A
            // lost lock fails the pool, which stops the scheduler (and the judge phase) at its next
            // step exactly as a dead worker server does: what was stored stays stored.
            runLock.watch(lockCheckInterval, lockCheckTimeout, lost -> {
                lockLost.set(lost);
                pool.fail(lost);
            });
            // Before the count of what is stored: the failed answers removed are answers to ask.
            FailedAnswerRetry retry = retryFailed ? FailedAnswerRetry.reset(store, plan.runId()) : null;
            // What the database held before this command noted its run: resumed, or new beside which.
            long storedBefore = store.recordCount(plan.runId());
            progress.expectAnswers(plan.vignetteCount(), storedBefore);
            List<RunEntry> earlier = store.runs();
            progress.message(JoinedRun.describe(earlier, manifest, storedBefore, plan.vignetteCount()));
            if (retry != null) {
                progress.message(retry.describe());
            }
            RunManifest noted = JoinedRun.keepGroupBy(earlier, manifest);
            String groupBy = noted.groupBy();
            store.recordRun(RunEntry.of(noted, settings.scorer(), Instant.now()));
            // The summary's figures, counted as the answers are stored: reading a million answers
            // back at the end cost more than all the rest after the last answer (LiveFigures).
            FailedAnswers.Counter liveFailed = new FailedAnswers.Counter();
            LiveFigures live = new LiveFigures(plan.runId(), groupBy, suite.vignettes().size(), liveFailed);
            store.onStored(live);
            Scoring current = JoinedRun.scoring(store, plan.runId(), scoring, suite, progress::message);
            progress.message(RunLines.plan(settings, suite, plan));
            suite.notes().forEach(progress::message);
            InetSocketAddress address = server == null ? null : server.address();
            if (server == null) {
                progress.message(RunLines.inProcess(inProcessWorker, target, settings));
                pool.add(inProcessWorker);
            } else {
                lock.listening(address);
                runLock.listening(address);
                progress.message("listening for workers on " + hostPort(address) + "; results go to " + target
                        + "; each attempt of a job may take " + Durations.format(settings.jobTimeout())
                        + " (--job-timeout)");
                progress.message(RunLines.workerHint(workerCommand, address, settings,
                        tlsContext == null ? null : tlsCaForWorkers, tlsClientCertificates));
            }
            pool.addListener(new ModelWatcher(pool, settings.models(), RunScoring.judgeModelOf(settings.scorer()),
                    progress::message));
            CoordinatorAdmin adminNow = admin;
            if (adminNow != null) {
                progress.message(RunLines.adminEndpoint(adminNow.address(), settings.token() != null));
            }
            if (address != null) {
                onListening.accept(address);
            }
            AttemptSpend unstored = new AttemptSpend();
            SchedulerOptions options = SchedulerOptions.defaults()
                    .withMaxAttempts(settings.maxAttempts())
                    .withWaitForWorkers(settings.waitForWorkers())
                    .withJobTimeout(settings.jobTimeout())
                    .withListener(inProcessWorker == null ? fanOut(progress, fleet, address, events, unstored)
                            : ProgressListener.fanOut(List.of(fanOut(progress, fleet, address, events, unstored),
                                    new SoleWorkerQuarantine(pool, inProcessWorker, inProcessRefusal))))
                    .withGate(governor == null ? DispatchGate.OPEN : governor);
            CostBudget budget = gates.budgetFor(store, plan.runId(), current.number());
            long started = System.nanoTime();
            RunReport report;
            RunReport grading = null;
            boolean judged = false;
            JudgePhase.Ungraded ungraded = JudgePhase.Ungraded.NONE;
            try {
                report = runJobs(frames, retry, store, adminNow, pool, budget, options, progress);
                if (JudgePhase.judges(current.scorer(), suite.vignettes())) {
                    judged = true;
                    JudgePhase judging = new JudgePhase(plan.runId(), settings.scorer(), settings.jobSize(), store,
                            current.number(), progress::message);
                    grading = judging.run(pool, options);
                    ungraded = judging.ungraded();
                }
            } catch (InterruptedException e) {
                events.storeIn(store, plan.runId());
                store.endSitting(plan.runId(), unstored.spend());
                progress.message("interrupted: " + RunLines.recordsKept(store.recordCount()) + " in " + target
                        + "; run the same command again to resume");
                return EXIT_INTERRUPTED;
            } catch (ModelsRefused e) {
                events.storeIn(store, plan.runId());
                store.endSitting(plan.runId(), unstored.spend());
                progress.message(e.getMessage() + "; " + RunLines.recordsKept(store.recordCount()) + " in " + target
                        + " (what the response cache served); run the same command again once the model API is up");
                return EXIT_MODEL_API_UNUSABLE;
            } catch (StoreUnavailableException e) {
                StoreFencedException fenced = Takeover.in(e);
                if (fenced != null) {
                    return fenced(fenced, progress);
                }
                // The store is what failed: nothing more is asked of it (the worker events are lost).
                progress.message(e.getMessage());
                log.debug("the result store failed for good", e);
                return EXIT_FAILED;
            } catch (WorkerSourceFailedException e) {
                if (e.getCause() instanceof StoreLock.LostException lost) {
                    return stopWithoutLock(lost, store, plan, runLock.epoch(), progress);
                }
                if (e.getCause() instanceof SoleWorkerQuarantinedException quarantined) {
                    events.storeIn(store, plan.runId());
                    store.endSitting(plan.runId(), unstored.spend());
                    progress.message("the run stopped: " + quarantined.getMessage() + "; "
                            + RunLines.recordsKept(store.recordCount()) + " in " + target + ". Fix the model API"
                            + " (--model-api, --api-key, --model; a multiple-choice task needs a server that returns"
                            + " prompt log-probabilities, such as vLLM) and run the same command again to resume;"
                            + " exiting with code " + EXIT_MODEL_API_UNUSABLE);
                    return EXIT_MODEL_API_UNUSABLE;
                }
                if (!(e.getCause() instanceof BudgetReachedException)) {
                    events.storeIn(store, plan.runId());
                    store.endSitting(plan.runId(), unstored.spend());
                    progress.message("the run stopped: " + e.getCause().getMessage() + "; "
                            + RunLines.recordsKept(store.recordCount())
                            + " in " + target + "; run the same command again to resume");
                    log.debug("the worker server failed", e);
                    return EXIT_FAILED;
                }
                // The budget's stop, once what was sent is stored: the summary says what is left.
                report = RunEnding.stoppedReport(plan, store, Duration.ofNanos(System.nanoTime() - started));
            }
            StoreLock.LostException lostLate = lockLost.get();
            if (lostLate != null) {
                // Lost after the last job's answer but before these last writes.
                return stopWithoutLock(lostLate, store, plan, runLock.epoch(), progress);
            }
            events.storeIn(store, plan.runId());
            progress.finish();
            fleet.quiet();
            String runId = plan.runId();
            int jobCount = plan.jobs().size();
            int answerCount = plan.vignetteCount();
            store.finishRun(runId, unstored.spend());
            // The suite and its plan are the largest thing on the heap (about twice the suite
            // file): they are let go first. The summary's figures were counted as the answers
            // were stored (LiveFigures: per vignette a few numbers in arrays); when they cannot
            // be those of the store they are let go and computed from the answers as they are
            // read back from the store, none of them held (RunDataLoader.stats), or a run of a
            // million vignettes under -Xmx of three times its file ran out of heap here.
            planned = null;
            suite = null;
            plan = null;
            frames = null;
            // Counted as stored when every answer of the run was stored now and none was graded
            // after (a judge's grades change scores the count saw); read back otherwise.
            store.onStored(null);
            FailedAnswers.Counter failedAnswers = liveFailed;
            RunStats figures = judged ? null : live.figures(store, current.number());
            live = null;
            summaryCountedAsStored = figures != null;
            if (figures == null) {
                failedAnswers = new FailedAnswers.Counter();
                figures = RunDataLoader.stats(store, runId, current.number(), groupBy, failedAnswers);
            }
            summary = RunSummary.of(jobCount, answerCount, report, figures, failedAnswers.result());
            if (adminNow != null) {
                adminNow.finished();
            }
            out.print(summary.render());
            boolean gradingFailed = grading != null && !grading.failed().isEmpty();
            // Answers a judge left without a grade (its reply was no verdict, or its job failed)
            // are ungraded as surely as those of a failed grading job: exit 3 either way.
            out.print(unstored.render(gates.prices()));
            RunEnding ending = new RunEnding(summary, gates, budget, !gradingFailed && ungraded.answers() == 0,
                    unstored);
            // Kept with the sitting, so that a later report or runs show says what stopped the run.
            RunStop stop = ending.stop();
            if (stop != null) {
                store.stopRun(runId, stop);
            }
            out.print(ending.render());
            out.print(RunLines.governor(governor));
            if (gradingFailed) {
                out.print(RunLines.ungraded(grading));
            } else if (ungraded.answers() > 0) {
                out.print(RunLines.notGraded(ungraded, CoordinatorRun.EXIT_INCOMPLETE));
            }
            out.flush();
            return ending.writeSummaryJson(err, EXIT_FAILED);
        } catch (StoreFencedException e) {
            // A write of the run's own (its start, its end, its worker events) found it taken over.
            return fenced(e, null);
        } finally {
            console = null;
        }
    }

    /**
     * Serves what the response cache holds, then schedules the rest on the fleet; returns the
     * scheduler's report. A method of its own so that the cache's plan of the jobs is gone with
     * its frame before the summary reads the answers back.
     */
    private RunReport runJobs(FrameLimitCheck frames, FailedAnswerRetry retry, JdbcResultStore store,
                              CoordinatorAdmin adminNow, SharedPool pool, CostBudget budget, SchedulerOptions options,
                              ProgressPrinter progress) throws InterruptedException {
        List<Job> jobs = frames.jobsToRun(store);
        CachePlan cached = new ResponseCache(store.answerCache(), cache, Clock.systemUTC())
                .serve(retry == null ? jobs : retry.jobsToRun(store, jobs));
        // Log-likelihood requests are sent at temperature 0 whatever the run's: the line says so.
        boolean loglikelihoodOnly = !jobs.isEmpty() && jobs.stream()
                .allMatch(j -> j.spec().vignettes().stream().allMatch(Vignette::isMultipleChoice));
        progress.message(RunLines.cache(cache, settings.params(), cached, loglikelihoodOnly));
        progress.addCacheHits((int) cached.served());
        // A job the cache answered whole stays in the plan, complete in the store: not one to ask.
        ResultStore planned = cached.storeFor(store);
        if (modelGate != null && cached.jobs().stream().anyMatch(job -> !planned.isComplete(job))) {
            String refusal = modelGate.refusal();
            if (refusal != null) {
                throw new ModelsRefused(refusal);
            }
        }
        ResultStore timed = adminNow == null ? store : adminNow.timed(store);
        return frames.recordFailures(store, new Scheduler(budget == null ? pool : budget.guard(pool),
                cached.storeFor(retry == null ? timed : retry.storeFor(timed)),
                budget == null ? options : budget.applyTo(options)).run(cached.jobs()));
    }

    /** The {@link ModelGate} refused the models while answers were left to ask; the message is its line. */
    private static final class ModelsRefused extends RuntimeException {
        ModelsRefused(String line) {
            super(line, null, false, false);
        }
    }

    /**
     * Ends a run whose lock was lost: writes nothing more (not even this session's worker event
     * counts, which another coordinator's run may be adding to now), and says so in one line.
     */
    private int stopWithoutLock(StoreLock.LostException lost, JdbcResultStore store, JobPlan plan, long epoch,
                                ProgressPrinter progress) {
        // Lost because another coordinator took the run over? Then say so, as a fenced write would.
        StoreFencedException takenOver = Takeover.afterLockLost(store, plan.runId(), epoch);
        if (takenOver != null) {
            return fenced(takenOver, progress);
        }
        progress.message(RunLines.lockLost(lost, store, plan));
        return EXIT_LOCK_LOST;
    }

    /** Ends a run another coordinator took over: nothing more is written; one line says so. */
    private int fenced(StoreFencedException e, ProgressPrinter progress) {
        String line = Takeover.line(e, EXIT_FENCED);
        if (progress != null) {
            progress.message(line);
        } else {
            err.println(line);
            err.flush();
        }
        return EXIT_FENCED;
    }


    /**
     * Prints a line on the run's console: through the progress printer while the run is on
     * (never blocking), straight to standard error otherwise. Any thread.
     */
    public void say(String text) {
        ProgressPrinter printer = console;
        if (printer != null) {
            printer.message(text);
        } else {
            err.println(text);
            err.flush();
        }
    }

    /** The worker server, listening; null when the run's worker is in process (nothing is bound). */
    private WorkerServer startServer(SharedPool pool, FleetReporter fleet) throws IOException {
        return inProcessWorker != null ? null : WorkerServer.start(serverOptions(), pool, withStatus(fleet));
    }

    private ServerOptions serverOptions() {
        ServerOptions.Builder b = ServerOptions.builder()
                .bind(listenAt != null ? listenAt : settings.listen())
                .maxFrameBytes(maxFrameBytes)
                .token(settings.token())
                .heartbeatInterval(settings.heartbeatInterval())
                // The scheduler's callback only queues an event for its own thread: it never blocks.
                .directCompletions(true);
        if (settings.heartbeatTimeout() != null) {
            b.heartbeatTimeout(settings.heartbeatTimeout());
        }
        if (tlsContext != null) {
            b.tls(tlsContext, tlsClientCertificates);
        }
        return b.build();
    }

    private ProgressListener fanOut(ProgressPrinter progress, FleetReporter fleet, InetSocketAddress address,
                                    WorkerEventCounter events, AttemptSpend unstored) {
        List<ProgressListener> all = new ArrayList<>();
        all.add(progress);
        all.add(events);
        all.add(unstored);
        if (!gates.prices().isEmpty()) {
            all.add(new LiveCost(gates.prices(), progress));
        }
        all.add(new WaitingNotices(progress, fleet, address));
        CoordinatorAdmin adminNow = admin;
        if (adminNow != null) {
            all.add(adminNow.status());
        }
        all.addAll(extraListeners);
        return ProgressListener.fanOut(all);
    }

    /** The fleet reporter, and the admin endpoint's status when there is one. */
    private WorkerServer.Listener withStatus(FleetReporter fleet) {
        CoordinatorAdmin adminNow = admin;
        return adminNow == null ? fleet : adminNow.alongside(fleet);
    }

    /** {@code host:port}, as the worker's {@code --coordinator} takes it. */
    public static String hostPort(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }
}

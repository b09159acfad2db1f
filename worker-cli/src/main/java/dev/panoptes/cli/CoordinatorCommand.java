package dev.panoptes.cli;

import dev.panoptes.console.Durations;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteSubset;
import dev.panoptes.coordinator.AdminLinger;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunGates;
import dev.panoptes.remote.tls.PemFiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import javax.net.ssl.SSLContext;
import java.io.PrintWriter;
import java.security.cert.X509Certificate;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar worker.jar coordinator --suite FILE ...}: runs an eval suite over whatever
 * workers connect, storing every record exactly once in a SQLite or PostgreSQL database
 * ({@code --db}). Re-running the same command against the same database resumes: complete jobs
 * are not sent again. This class checks the options and turns them into a
 * {@link CoordinatorRun}, which does the run on the command's thread. What the run is (suite,
 * models, scorer, database, ...) comes from {@link RunOptions}, which {@code eval} shares; the
 * fleet's options (listening, token, heartbeats, TLS, metrics) are this class's.
 */
@Command(name = "coordinator",
        sortOptions = false,
        usageHelpWidth = 100,
        mixinStandardHelpOptions = true,
        description = {
            "Runs an eval suite across the workers that connect to it, and stores one record per vignette"
                    + " in a SQLite database. Jobs of a worker that dies or goes silent are sent to another.",
            "Running the same command again against the same --db resumes the run: complete jobs are not"
                    + " sent again. Ctrl-C stops cleanly; what was stored is kept.",
            "One coordinator per --db: a second one is refused, naming the first (pid, host, address). The"
                    + " lock is an OS lock on FILE.lock beside the database, so it ends with its holder, even"
                    + " after kill -9.",
            "With --db postgresql://..., coordinators of different runs share one database; a second one on"
                    + " the same run is refused (a PostgreSQL advisory lock, which ends with its holder's session),"
                    + " unless it is a --standby: that one waits, and takes the run over when the lock ends."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:every job completed",
            "1:failed at run time (for example the address, or the --db, is in use; or the coordinator's worker"
                    + " server failed mid-run: run the same command again to resume)",
            "2:invalid command line or suite file",
            "3:the run ended with jobs that failed for good (listed in the summary), or answers left ungraded",
            "4:the run's PostgreSQL lock was lost mid-run (its session ended or stopped answering): the run"
                    + " stopped, what was stored is kept; run the same command again to resume",
            "5:every job completed, with more failed answers than --max-error-rate allows",
            "6:every job completed, and a model's accuracy is below --fail-under",
            "7:the --max-cost budget stopped the run (what was sent is stored; a larger budget resumes)",
            "9:fenced: another coordinator (a --standby) took the run over while this one lived (frozen, or cut off"
                    + " from the database); this one stored nothing after the takeover",
            "130:interrupted (Ctrl-C); run the same command again to resume"
        },
        footerHeading = "%nSuite file:%n",
        footer = {
            "  JSONL, one vignette per line: {\"id\": \"q1\", \"prompt\": \"...\", \"expected\": \"...\", \"metadata\": {...}}",
            "  or a chat instead of a prompt: \"messages\": [{\"role\": \"user\", \"content\": \"...\"}, ...]; a vignette's",
            "  own \"scorer\" overrides --scorer. CSV: a header row with id, prompt and optionally expected and scorer;",
            "  other columns become metadata. Vignettes without an expected answer are not scored.",
            "",
            "Example:",
            "  java -jar worker.jar coordinator --listen 0.0.0.0:7070 --suite evals/math.jsonl --db math.db \\",
            "      --model llama-3.1-8b --model qwen2.5-7b --scorer numeric --epochs 3"
        })
public final class CoordinatorCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Mixin
    private RunOptions runOptions;

    @Option(names = "--listen", order = 10, paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:7070",
            converter = HostPortConverter.Listen.class,
            description = "Where to listen for workers. Use 0.0.0.0:PORT to accept other machines; port 0 picks"
                    + " a free one."
                    + " Default: ${DEFAULT-VALUE}.")
    private InetSocketAddress listen;

    @Option(names = "--token", order = 50, paramLabel = "TOKEN",
            description = "A shared secret workers must present. Default: the " + WorkerMain.TOKEN_ENV
                    + " environment variable; none when unset. Never printed.")
    private String token;

    @Option(names = "--max-frame-bytes", order = 107, paramLabel = "BYTES", defaultValue = "16777216",
            converter = FrameBytesConverter.class,
            description = "The largest frame this side sends or accepts, in bytes (at least 65536). An assign frame"
                    + " holds a job's vignettes, a result frame their answers: raise it on both sides (the coordinator"
                    + " and every worker) for suites whose vignettes are bigger. A vignette too big for it is reported"
                    + " with its line before the run starts, and fails alone (its job is recorded as failed, not"
                    + " sent). Default: ${DEFAULT-VALUE} (16 MiB).")
    private int maxFrameBytes;

    @Option(names = "--wait-for-workers", order = 110, paramLabel = "DURATION", defaultValue = "5m",
            converter = DurationConverter.class,
            description = "How long to wait while no worker is connected before giving up. Default: ${DEFAULT-VALUE}.")
    private Duration waitForWorkers;

    @Option(names = "--heartbeat-interval", order = 120, paramLabel = "DURATION", defaultValue = "5s",
            converter = DurationConverter.class,
            description = "How often the coordinator sends a heartbeat. Default: ${DEFAULT-VALUE}.")
    private Duration heartbeatInterval;

    @Option(names = "--heartbeat-timeout", order = 130, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Drop a worker silent for this long. Default: 3 x --heartbeat-interval (15s).")
    private Duration heartbeatTimeout;

    @Option(names = "--max-concurrency-per-endpoint", order = 137, paramLabel = "N", defaultValue = "0",
            description = "The most jobs in flight against one model API (workers with the same --model-api) across"
                    + " the fleet; 0 for no ceiling. Either way the fleet backs off together when the API answers"
                    + " 429: its limit drops to three quarters (at most once per round trip, never below one job"
                    + " per worker behind the API), then grows by one job per round of answers."
                    + " Default: ${DEFAULT-VALUE}.")
    private int maxConcurrencyPerEndpoint;

    @Option(names = "--tls-cert", order = 140, paramLabel = "FILE",
            description = "Serve workers over TLS with this certificate chain (PEM, the coordinator's own first);"
                    + " with --tls-key. Workers then need --tls (and --tls-ca when its CA is not in their JVM's"
                    + " trust store). Default: plaintext.")
    private Path tlsCert;

    @Option(names = "--tls-key", order = 141, paramLabel = "FILE",
            description = "The unencrypted PKCS#8 private key (PEM) of --tls-cert.")
    private Path tlsKey;

    @Option(names = "--tls-client-ca", order = 142, paramLabel = "FILE",
            description = "Mutual TLS: workers must present a certificate issued by this CA (PEM). Without --token,"
                    + " such a certificate alone lets a worker register; with --token, it needs both.")
    private Path tlsClientCa;

    @Option(names = "--no-rate-governor", order = 138,
            description = "Do not govern the fleet's concurrency per model API: each worker backs off alone on 429.")
    private boolean noRateGovernor;

    @Option(names = "--standby", order = 146,
            description = "PostgreSQL --db only: when another coordinator holds this run, wait on its lock instead of"
                    + " being refused, answering workers on --listen that this one does not hold the run (so that"
                    + " workers given both addresses, --coordinator a:7070,b:7070, go to the holder); take the run"
                    + " over from the store within a second of the holder's lock ending (it died, or stopped"
                    + " checking its lock for --lock-lease). The old holder's writes are fenced from then on.")
    private boolean standby;

    @Option(names = "--lock-lease", order = 147, paramLabel = "DURATION", defaultValue = "15s",
            converter = DurationConverter.class,
            description = "PostgreSQL --db: the run lock's session is checked every third of this; one that stays"
                    + " idle this long (its coordinator frozen or cut off) is ended by the server, which frees the"
                    + " run for a --standby. Default: ${DEFAULT-VALUE}.")
    private Duration lockLease;

    @Mixin
    private MetricsOptions admin;

    @Mixin
    private RunChoices choices;

    @Option(names = "--admin-linger", order = 145, paramLabel = "DURATION", defaultValue = "35s",
            converter = DurationConverter.OrZero.class,
            description = "With --metrics: once the summary is printed, keep /metrics and /status up this long, so"
                    + " that a scraper (Prometheus scrapes every 15s or so) reads the run's final figures; /status"
                    + " then says the run finished. 0 exits at once (and is accepted without --metrics); Ctrl-C"
                    + " or SIGTERM ends the wait at once. Default: ${DEFAULT-VALUE}.")
    private Duration adminLinger;

    private final Map<String, String> env;

    public CoordinatorCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    @Override
    public Integer call() throws Exception {
        verbose.applyQuietingLibrary();
        CoordinatorSettings settings = settings();
        if (maxConcurrencyPerEndpoint < 0) {
            throw invalid("--max-concurrency-per-endpoint", "must be 0 (no ceiling) or more, got "
                    + maxConcurrencyPerEndpoint);
        }
        checkMetrics(settings.token() != null);
        if (standby && !(runOptions.database instanceof DatabaseTarget.Postgres)) {
            throw invalid("--standby", "needs a PostgreSQL --db (postgresql://...): only a run in a shared database"
                    + " can be taken over from another machine");
        }
        if (lockLease.toMillis() < 300) {
            throw invalid("--lock-lease", "must be at least 300ms, got " + Durations.format(lockLease));
        }
        SuiteSubset subset = choices.subset(spec);
        if (choices.dryRun()) {
            return choices.printPlan(spec, settings, subset);
        }
        RunGates gates = choices.gates(spec, runOptions, settings);
        CoordinatorRun run = choices.applyTo(new CoordinatorRun(settings, spec.commandLine().getOut(),
                        spec.commandLine().getErr(), choices.liveProgress(), Jars.selfCommand()), spec, gates, subset)
                .withRateGovernor(!noRateGovernor, maxConcurrencyPerEndpoint)
                .withMaxFrameBytes(maxFrameBytes)
                .withDatabase(runOptions.database)
                .withLockLease(lockLease)
                .withAdmin(admin.metrics, admin.insecure);
        configureTls(run);
        if (standby) {
            run.asStandby();
        }
        try {
            return runInterruptibly(run, adminLinger, spec.commandLine().getErr());
        } catch (SuiteFormatException e) {
            return suiteProblems(spec, e);
        } catch (SuiteSubset.UnknownIdsException e) {
            throw invalid("--sample-id", e.getMessage());
        } finally {
            run.closeAdmin();
        }
    }

    /**
     * Checks --metrics, --metrics-insecure and --admin-linger against each other and the token; a
     * problem is a usage error (exit 2) that says how to fix it.
     */
    private void checkMetrics(boolean hasToken) {
        admin.check(spec, hasToken, "/metrics and /status then require wherever they are served");
        // A linger of 0 asks for nothing to be kept up, which holds without --metrics too: scripts
        // that always pass it are not refused. Any other linger without --metrics is a mistake.
        if (admin.metrics == null && spec.commandLine().getParseResult().hasMatchedOption("--admin-linger")
                && !adminLinger.isZero()) {
            throw invalid("--admin-linger", "it keeps --metrics up after the run, and --metrics is not given"
                    + " (--admin-linger 0 is accepted without it)");
        }
    }

    /**
     * Checks --tls-cert, --tls-key and --tls-client-ca (present, PEM, the key matching the
     * certificate) and hands the context to the run; a problem is a usage error (exit 2) naming the file.
     */
    private void configureTls(CoordinatorRun run) {
        if (tlsCert == null && tlsKey == null) {
            if (tlsClientCa != null) {
                throw invalid("--tls-client-ca", "needs --tls-cert and --tls-key (mutual TLS is TLS first)");
            }
            return;
        }
        if (tlsCert == null || tlsKey == null) {
            throw invalid(tlsCert == null ? "--tls-key" : "--tls-cert", "TLS needs both --tls-cert and --tls-key");
        }
        SSLContext context;
        List<X509Certificate> chain;
        try {
            chain = PemFiles.readCertificates(tlsCert, "--tls-cert");
            context = PemFiles.serverContext(tlsCert, tlsKey, tlsClientCa);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid TLS option: " + e.getMessage());
        }
        // The hint names the file workers should trust: the chain itself when it ends in its root.
        X509Certificate last = chain.get(chain.size() - 1);
        boolean endsInRoot = last.getSubjectX500Principal().equals(last.getIssuerX500Principal());
        run.withTls(context, tlsClientCa != null, endsInRoot ? tlsCert.toString() : "CA.pem");
    }

    /** Prints the suite's problems and what to do; a usage error (exit 2): nothing was sent to any worker. */
    static int suiteProblems(CommandSpec spec, SuiteFormatException e) {
        PrintWriter err = spec.commandLine().getErr();
        err.println(e.getMessage());
        err.println("Fix these lines and run the command again; nothing was sent to any worker.");
        err.flush();
        return spec.exitCodeOnInvalidInput();
    }

    /** Runs on this thread; Ctrl-C interrupts it and waits (a little) for the store to close cleanly. */
    static int runInterruptibly(CoordinatorRun run) throws Exception {
        return runInterruptibly(run, Duration.ZERO, null);
    }

    /**
     * As {@link #runInterruptibly(CoordinatorRun)}, then, unless the run was interrupted, keeps
     * its admin endpoint up for {@code adminLinger} (see {@link AdminLinger}); Ctrl-C ends that
     * wait at once, and the run's exit code stands.
     *
     * @param console where the linger's line goes; unused for a zero linger
     */
    static int runInterruptibly(CoordinatorRun run, Duration adminLinger, PrintWriter console) throws Exception {
        Thread main = Thread.currentThread();
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            main.interrupt();
            try {
                finished.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "coordinator-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            int code = run.run();
            if (code != CoordinatorRun.EXIT_INTERRUPTED && !adminLinger.isZero()) {
                run.adminFinished();
                try {
                    AdminLinger.await(run.adminAddress(), adminLinger, console);
                } catch (InterruptedException e) {
                    // Ctrl-C or SIGTERM while lingering: the run is over, its exit code stands.
                    Thread.currentThread().interrupt();
                }
            }
            return code;
        } finally {
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // The JVM is already shutting down: the hook is running, nothing to remove.
            }
        }
    }

    public CoordinatorSettings settings() {
        if (heartbeatTimeout != null && heartbeatTimeout.compareTo(heartbeatInterval) <= 0) {
            throw invalid("--heartbeat-timeout", "must be longer than --heartbeat-interval ("
                    + Durations.format(heartbeatInterval) + "), got " + Durations.format(heartbeatTimeout));
        }
        String secret = token != null && !token.isBlank() ? token : env.get(WorkerMain.TOKEN_ENV);
        return runOptions.settings(spec, env, listen, secret == null || secret.isBlank() ? null : secret, waitForWorkers,
                heartbeatInterval, heartbeatTimeout, null);
    }

    /**
     * The {@code --db} of a command, with its password for PostgreSQL (see {@link DatabaseTarget}).
     *
     * @throws ParameterException when --db is malformed or carries a password, or the password file
     *                            cannot be read (never repeating a password)
     */
    static DatabaseTarget database(CommandSpec spec, String db, Path passwordFile, Map<String, String> env) {
        DatabaseTarget target;
        try {
            target = DatabaseTarget.parse(db);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--db': " + e.getMessage());
        }
        if (target instanceof DatabaseTarget.Postgres postgres) {
            try {
                return postgres.withPassword(DatabaseTarget.password(passwordFile, env));
            } catch (java.io.IOException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--db-password-file': "
                        + e.getMessage());
            }
        }
        if (passwordFile != null) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--db-password-file': only"
                    + " for a PostgreSQL --db (postgresql://...); " + db + " is a SQLite file");
        }
        return target;
    }

    private ParameterException invalid(String option, String why) {
        return CliErrors.invalid(spec, option, why);
    }
}

package dev.panoptes.cli;

import dev.panoptes.console.Durations;
import dev.panoptes.control.Redaction;
import dev.panoptes.remote.tls.PemFiles;
import dev.panoptes.worker.WorkerIds;
import dev.panoptes.worker.WorkerOptions;
import dev.panoptes.worker.WorkerProcess;
import dev.panoptes.worker.WorkerSettings;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import javax.net.ssl.SSLContext;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar --coordinator HOST:PORT --model-api URL --model NAME}: checks that
 * the model API serves the model, connects to a coordinator and runs the jobs it assigns through
 * that API, reconnecting forever, until SIGTERM or SIGINT (then it drains and exits 0). It exits
 * {@value #EXIT_MODEL_API_UNUSABLE} when the model API is unusable as configured, and
 * {@value #EXIT_REJECTED} when the coordinator rejects it for good.
 *
 * <p>The options a worker needs ({@code --coordinator}, {@code --model-api}, {@code --model}) are
 * checked in {@link #call()} rather than marked required, so that subcommands added to this
 * command later parse without them. Secrets ({@code --api-key}, {@code --token}, or the
 * environment variables behind them) are never printed: not in help, logs, or errors.
 *
 * <p>Tests build the command with {@link #newCommandLine(Map, WorkerStarter)} and a fake
 * starter, and never reach {@link System#exit(int)}.
 */
@Command(name = "worker.jar",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        usageHelpWidth = 100,
        description = {
            "Runs Panoptes evaluation jobs: connects to a coordinator, registers, and answers each job it is"
                    + " assigned by sending the job's prompts to an OpenAI-compatible model API.",
            "Before registering it checks that the model API answers and serves --model (GET /models, or"
                    + " a cheap probe of /chat/completions when the server lists no models), and exits 3 when the"
                    + " URL, key or model is wrong; while the model API is not up yet it waits.",
            "Reconnects forever, with backoff, when the coordinator is down or the connection drops, and"
                    + " exits 4 when the coordinator rejects it for good (wrong token, unsupported protocol,"
                    + " invalid id). On SIGTERM or SIGINT it tells the coordinator it is draining, finishes and"
                    + " answers the jobs it holds (up to --grace), and exits 0.",
            "The same jar is also the coordinator ('coordinator --suite FILE'), a whole run on one machine"
                    + " ('eval --suite FILE --model-api URL'), exports results ('results')"
                    + " and runs the whole system on this machine ('demo'), or only a stub model API to try a"
                    + " worker against ('stub-model'); see '<command> --help'."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped cleanly (after SIGTERM or SIGINT, or --help/--version)",
            "1:failed at run time (the message says why; -v adds the stack trace)",
            "2:invalid command line (the message names the option)",
            "3:the model API is unusable as configured: bad URL, key or model (the message says which;"
                    + " --no-model-check skips the check)",
            "4:the coordinator rejected the registration for good: wrong token, unsupported protocol or"
                    + " invalid id (the message gives the coordinator's reason)"
        },
        footerHeading = "%nEnvironment:%n",
        footer = {
            "  OPENAI_API_KEY   the model API key when --api-key is not given (preferred: the command line",
            "                   is visible to other users of the machine)",
            "  PANOPTES_TOKEN   the coordinator's token when --token is not given",
            "",
            "Logging:",
            "  Logs go to standard error at INFO. java -Dlogback.configurationFile=FILE -jar worker.jar ... uses your",
            "  logback configuration instead; it decides every level unless --log-level or -v is given too.",
            "",
            "Example:",
            "  java -jar worker.jar --coordinator 10.0.0.5:7070 --model-api http://localhost:8000/v1 \\",
            "      --model llama-3.1-8b --requests 128"
        })
public final class WorkerMain implements Callable<Integer> {
    /** Environment variable read when {@code --api-key} is not given. */
    public static final String API_KEY_ENV = "OPENAI_API_KEY";
    /** Environment variable read when {@code --token} is not given. */
    public static final String TOKEN_ENV = "PANOPTES_TOKEN";
    /** Exit code when the model API's startup check finds it unusable as configured. */
    public static final int EXIT_MODEL_API_UNUSABLE = WorkerProcess.EXIT_MODEL_API_UNUSABLE;
    /** Exit code when the coordinator rejects the registration and says retrying cannot help. */
    public static final int EXIT_REJECTED = WorkerProcess.EXIT_REJECTED;

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Mixin
    private ModelApiOptions modelApiOptions;

    @Option(names = "--coordinator", order = 10, paramLabel = "HOST:PORT", converter = HostPortConverter.Several.class,
            description = "Where the coordinator listens, e.g. 10.0.0.5:7070. Required. Several, comma-separated"
                    + " (a primary and its standbys, 10.0.0.5:7070,10.0.0.6:7070): the worker follows whichever"
                    + " holds the run, trying the next address when one refuses it or goes away.")
    private HostPortConverter.Addresses coordinator;

    @Option(names = "--model", order = 30, paramLabel = "NAME",
            description = "A model this worker serves, e.g. llama-3.1-8b; repeat for several. The coordinator sends"
                    + " only jobs for these models. Default: every model the API lists (GET /models).")
    private List<String> models = new ArrayList<>();

    @Option(names = "--sandboxes", order = 65, paramLabel = "N", description = "How many sandboxes (bubblewrap) to run at once for the commands of"
                    + " tool-using samples, apart from --requests; 0 for none. At start the worker builds one and says"
                    + " whether it can; a worker that cannot runs no command outside one. Default: the number of"
                    + " processors.")
    private Integer sandboxes;

    @Option(names = "--id", order = 50, paramLabel = "ID", converter = WorkerIdConverter.class,
            description = "This worker's id: 1 to 128 characters from [A-Za-z0-9._:@-]."
                    + " Default: <host name>-<pid>.")
    private String id;

    @Option(names = "--token", order = 70, paramLabel = "TOKEN",
            description = "The coordinator's shared secret. Default: the " + TOKEN_ENV + " environment variable."
                    + " Never printed.")
    private String token;

    @Option(names = "--heartbeat", order = 80, paramLabel = "DURATION", defaultValue = "5s", converter = DurationConverter.class,
            description = "How often to send a heartbeat (500ms, 5s, 2m, PT5S...). Default: ${DEFAULT-VALUE}.")
    private Duration heartbeat;

    @Option(names = "--heartbeat-timeout", order = 90, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Reconnect when nothing arrives from the coordinator for this long."
                    + " Default: 3 x --heartbeat.")
    private Duration heartbeatTimeout;

    @Option(names = "--grace", order = 100, paramLabel = "DURATION", defaultValue = "30s", converter = DurationConverter.class,
            description = "On SIGTERM/SIGINT, how long to wait for running jobs before exiting."
                    + " Default: ${DEFAULT-VALUE}.")
    private Duration grace;

    @Mixin
    private MetricsOptions admin;

    @Option(names = "--max-frame-bytes", order = 135, paramLabel = "BYTES", defaultValue = "16777216",
            converter = FrameBytesConverter.class,
            description = "The largest frame this side sends or accepts, in bytes (at least 65536). An assign frame holds a"
                    + " job's vignettes, a result frame their answers: raise it on both sides (the coordinator and"
                    + " every worker) for suites whose vignettes are bigger. Default: ${DEFAULT-VALUE} (16 MiB).")
    private int maxFrameBytes;

    @Option(names = "--tls", order = 140,
            description = "Connect to the coordinator over TLS, checking its certificate against the JVM's trusted"
                    + " CAs (or --tls-ca) and the host name of --coordinator. Default: plaintext TCP.")
    private boolean tlsOn;

    @Option(names = "--tls-ca", order = 150, paramLabel = "FILE",
            description = "The CA certificate(s) (PEM) to trust for the coordinator's certificate, instead of the"
                    + " JVM's. Implies --tls.")
    private Path tlsCa;

    @Option(names = "--tls-cert", order = 160, paramLabel = "FILE",
            description = "This worker's certificate chain (PEM), for a coordinator that requires client"
                    + " certificates (mutual TLS); with --tls-key. Implies --tls.")
    private Path tlsCert;

    @Option(names = "--tls-key", order = 170, paramLabel = "FILE",
            description = "The unencrypted PKCS#8 private key (PEM) of --tls-cert. Implies --tls.")
    private Path tlsKey;

    private final Map<String, String> env;
    private final WorkerStarter starter;

    /**
     * @param env     the environment to read {@value #API_KEY_ENV} and {@value #TOKEN_ENV} from
     * @param starter what to do with valid settings; its return value is the exit code
     */
    WorkerMain(Map<String, String> env, WorkerStarter starter) {
        this.env = Map.copyOf(Objects.requireNonNull(env, "env"));
        this.starter = Objects.requireNonNull(starter, "starter");
    }

    /** Runs the worker; exits with the code {@link #run} returns. */
    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(args, out, err, System.getenv()));
    }

    /**
     * Parses {@code args} and runs the command, printing to the given writers. Never calls
     * {@link System#exit(int)}. Blocks while the worker runs. Any thread.
     *
     * <p>Builds only the part of the command tree the arguments need, since building the whole
     * tree is most of a short command's start-up; what it prints and returns is the same as
     * {@code newCommandLine(env).execute(args)} would.
     *
     * @return the exit code: 0 ok, 1 runtime failure, 2 usage error, {@value #EXIT_MODEL_API_UNUSABLE}
     *         model API unusable as configured, {@value #EXIT_REJECTED} rejected by the coordinator
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env) {
        return run(args, out, err, env, WorkerProcess::start);
    }

    /**
     * {@link #run(String[], PrintWriter, PrintWriter, Map)} with another starter, for tests. When
     * the first argument names a subcommand, the tree holds that subcommand alone: nothing the
     * subcommand prints depends on its siblings. Otherwise the arguments are tried on the root
     * without subcommands ({@link BareRootRun}), and run on the whole tree when they need it.
     */
    static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env, WorkerStarter starter) {
        if (args.length > 0 && Subcommands.NAMES.contains(args[0])) {
            return execute(newCommandLine(env, starter, List.of(args[0])), args, out, err);
        }
        BareRootRun bare = new BareRootRun();
        CommandLine bareRoot = newCommandLine(env, starter, List.of());
        bareRoot.setOut(out);
        bareRoot.setErr(err);
        int exit = bare.execute(bareRoot, args);
        return bare.needsWholeTree() ? execute(newCommandLine(env, starter), args, out, err) : exit;
    }

    private static int execute(CommandLine cmd, String[] args, PrintWriter out, PrintWriter err) {
        cmd.setOut(out);
        cmd.setErr(err);
        return cmd.execute(args);
    }

    /**
     * The configured command, ready for {@code execute()}, with Panoptes' error handlers and
     * every subcommand. The worker it starts is the real one.
     */
    public static CommandLine newCommandLine(Map<String, String> env) {
        return newCommandLine(env, WorkerProcess::start);
    }

    /** The configured command with every subcommand and another starter, for tests. */
    public static CommandLine newCommandLine(Map<String, String> env, WorkerStarter starter) {
        return newCommandLine(env, starter, Subcommands.NAMES);
    }

    /** The configured command with the given subcommands only ({@link Subcommands#NAMES}), in that order. */
    static CommandLine newCommandLine(Map<String, String> env, WorkerStarter starter, List<String> subcommands) {
        CommandLine cmd = new CommandLine(new WorkerMain(env, starter));
        for (String name : subcommands) {
            cmd.addSubcommand(Subcommands.create(name, env));
        }
        // A model may well be named like a command ("--model stub-model", "--model report"): an
        // option's value is never taken for a subcommand.
        cmd.setAllowSubcommandsAsOptionParameters(true);
        // "--sample-id @ids.txt" names a file of ids for the option to read, one per line: picocli
        // must not expand it into arguments first.
        cmd.setExpandAtFiles(false);
        cmd.setParameterExceptionHandler(CliErrors.USAGE);
        cmd.setExecutionExceptionHandler(CliErrors.RUNTIME);
        return cmd;
    }

    /**
     * Checks what parsing alone cannot (required options, the environment fallbacks, option
     * combinations) and starts the worker.
     *
     * @return the starter's exit code
     * @throws ParameterException when the command line is incomplete or inconsistent (exit 2)
     * @throws Exception          whatever the worker fails with at run time (exit 1)
     */
    @Override
    public Integer call() throws Exception {
        verbose.apply();
        requireWorkerOptions();
        for (String model : models) {
            if (model.isBlank()) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--model': must not be empty");
            }
        }
        if (models.isEmpty() && modelApiOptions.noModelCheck) {
            throw new ParameterException(spec.commandLine(), "Missing required option '--model=NAME': without the"
                    + " model API check (--no-model-check) the worker cannot ask the API which models it serves");
        }
        WorkerOptions options = WorkerOptions.defaults()
                .withHeartbeat(heartbeat)
                .withToken(firstSet(token, env.get(TOKEN_ENV)))
                .withLabels(labels());
        options = options.withMaxFrameBytes(maxFrameBytes);
        admin.check(spec, options.token() != null, "/metrics then requires wherever it is served");
        if (heartbeatTimeout != null) {
            if (heartbeatTimeout.compareTo(heartbeat) <= 0) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--heartbeat-timeout':"
                        + " must be longer than --heartbeat (" + Durations.format(heartbeat) + "), got "
                        + Durations.format(heartbeatTimeout));
            }
            options = options.withHeartbeatTimeout(heartbeatTimeout);
        }
        options = options.withTls(tlsContext());
        String key = modelApiOptions.apiKey(spec, env);
        WorkerSettings settings = new WorkerSettings(coordinator.list(), modelApiOptions.modelApi,
                List.copyOf(new LinkedHashSet<>(models)), key, id == null ? WorkerIds.defaultId() : id,
                modelApiOptions.capacity(), modelApiOptions.requests, options, grace, modelApiOptions.requestTimeout,
                !modelApiOptions.noModelCheck, verbose.isVerbose(), admin.metrics, admin.insecure,
                sandboxes());
        return starter.start(settings);
    }

    /** --sandboxes, or the number of processors when it is not given. */
    private int sandboxes() {
        if (sandboxes == null) {
            return Runtime.getRuntime().availableProcessors();
        }
        if (sandboxes < 0 || sandboxes > 1024) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--sandboxes': must be 0 to"
                    + " 1024, got " + sandboxes);
        }
        return sandboxes;
    }

    /**
     * The first model, and the model API's URL as {@code endpoint}: the coordinator governs the
     * concurrency of all workers that call one endpoint together. The label is
     * {@code scheme://host:port/path} only: the URL converter refuses user info and queries, and
     * {@link Redaction} would strip them anyway, so that no key reaches the coordinator's logs.
     */
    private Map<String, String> labels() {
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        if (!models.isEmpty()) {
            labels.put("model", models.get(0));
        }
        labels.put("endpoint", Redaction.url(modelApiOptions.modelApi.toString()).replaceAll("/+$", ""));
        return labels;
    }

    /** The TLS context of --tls, --tls-ca, --tls-cert and --tls-key; null for plaintext. */
    private SSLContext tlsContext() {
        if (!tlsOn && tlsCa == null && tlsCert == null && tlsKey == null) {
            return null;
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '"
                    + (tlsCert == null ? "--tls-key" : "--tls-cert") + "': a client certificate needs both --tls-cert"
                    + " and --tls-key");
        }
        try {
            return PemFiles.clientContext(tlsCa, tlsCert, tlsKey);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid TLS option: " + e.getMessage());
        }
    }

    private void requireWorkerOptions() {
        List<String> missing = new ArrayList<>();
        if (coordinator == null) {
            missing.add("'--coordinator=HOST:PORT'");
        }
        if (modelApiOptions.modelApi == null) {
            missing.add("'--model-api=URL'");
        }
        if (!missing.isEmpty()) {
            throw new ParameterException(spec.commandLine(), (missing.size() == 1
                    ? "Missing required option: " : "Missing required options: ") + String.join(", ", missing));
        }
    }

    /** The option's value, else the environment's; blank counts as not given. */
    static String firstSet(String option, String fromEnv) {
        if (option != null && !option.isBlank()) {
            return option;
        }
        return fromEnv == null || fromEnv.isBlank() ? null : fromEnv;
    }

    /** What {@link WorkerMain} does with valid settings; tests substitute a recorder. */
    @FunctionalInterface
    public interface WorkerStarter {
        /**
         * Starts the worker and blocks while it runs.
         *
         * @return the exit code
         * @throws Exception any failure, reported by {@link CliErrors#RUNTIME} (exit 1)
         */
        int start(WorkerSettings settings) throws Exception;
    }
}

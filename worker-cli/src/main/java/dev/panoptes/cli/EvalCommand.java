package dev.panoptes.cli;

import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteSubset;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.RunGates;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.coordinator.ModelApiWorker;
import dev.panoptes.eval.sandbox.SandboxLimits;
import dev.panoptes.eval.sandbox.Sandboxes;
import dev.panoptes.eval.http.ModelApiCheck;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar eval --suite FILE --model M --model-api URL}: a whole run on one
 * machine in one command. The coordinator's run (the same scheduler, store, locks and summary as
 * {@code coordinator}) with one worker in this process instead of a worker server: the worker's
 * model client, checked as a worker checks it, answers the jobs directly, with no socket between
 * them. The run's options are {@link RunOptions} (as {@code coordinator} takes them), the model
 * API's {@link ModelApiOptions} (as the worker takes them); this class only puts them together,
 * through {@link ModelApiWorker} and {@link CoordinatorRun#withInProcessWorker}. Runs on the
 * command's thread; Ctrl-C stops it keeping what was stored.
 */
@Command(name = "eval",
        sortOptions = false,
        usageHelpWidth = 100,
        mixinStandardHelpOptions = true,
        description = {
            "Runs an eval suite on this machine in one command: a coordinator and its worker in one process,"
                    + " asking an OpenAI-compatible model API and storing one record per vignette in a SQLite (or"
                    + " PostgreSQL) database, with the summary the coordinator prints.",
            "Before the run it checks that the model API answers and serves every --model (as a worker does;"
                    + " --no-model-check skips it), and exits " + EvalCommand.EXIT_MODEL_API_UNUSABLE + " when it"
                    + " does not, having run nothing. A model API that does not answer at all stops the run only"
                    + " if answers are left once the --db's response cache has served what it holds.",
            "Running the same command again against the same --db resumes the run. To spread a suite over"
                    + " several machines, run 'coordinator' and workers instead: the database and the run are"
                    + " the same."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:every job completed",
            "1:failed at run time (for example the --db is in use by another coordinator)",
            "2:invalid command line or suite file",
            "3:the run ended with jobs that failed for good (listed in the summary), or answers left ungraded",
            "4:the run's PostgreSQL lock was lost mid-run: the run stopped, what was stored is kept; run the same"
                    + " command again to resume",
            "5:every job completed, with more failed answers than --max-error-rate allows",
            "6:every job completed, and a model's accuracy is below --fail-under",
            "7:the --max-cost budget stopped the run (what was sent is stored; a larger budget resumes)",
            EvalCommand.EXIT_MODEL_API_UNUSABLE + ":the model API is unreachable or unusable as configured: bad URL,"
                    + " key or model (the message says which); nothing was run",
            "130:interrupted (Ctrl-C); run the same command again to resume"
        },
        footerHeading = "%nEnvironment:%n",
        footer = {
            "  OPENAI_API_KEY   the model API key when --api-key is not given",
            "",
            "Suite file: as for 'coordinator' (see 'coordinator --help').",
            "",
            "Example:",
            "  java -jar worker.jar eval --suite evals/math.jsonl --model llama-3.1-8b \\",
            "      --model-api http://localhost:8000/v1 --db math.db --requests 128",
            "  java -jar worker.jar eval --task evals/arithmetic-task.yaml --model llama-3.1-8b \\",
            "      --model-api http://localhost:8000/v1 --db mc.db   (an lm-eval task file)"
        })
public final class EvalCommand implements Callable<Integer> {
    /** Exit code when the model API is unreachable or unusable as configured; nothing was run. */
    public static final int EXIT_MODEL_API_UNUSABLE = CoordinatorRun.EXIT_MODEL_API_UNUSABLE;
    /**
     * How long the run may have no usable worker before it fails what remains: the coordinator's
     * default, since the one worker is quarantined for a while when its model API falters mid-run.
     */
    private static final Duration WAIT_FOR_WORKERS = Duration.ofMinutes(5);

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Mixin
    private RunOptions runOptions;

    @Mixin
    private ModelApiOptions modelApiOptions;

    @Mixin
    private RunChoices choices;

    @Option(names = "--sandboxes", paramLabel = "N", description = "How many sandboxes (bubblewrap) to run at once"
            + " for vignettes that declare one (tools, a check of the answer); default: the number of processors.")
    private Integer sandboxSlots;

    private final Map<String, String> env;

    /** @param env the environment to read {@value WorkerMain#API_KEY_ENV} from */
    public EvalCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    @Override
    public Integer call() throws Exception {
        verbose.applyQuietingLibrary();
        if (modelApiOptions.modelApi == null) {
            throw new ParameterException(spec.commandLine(), "Missing required option: '--model-api=URL' (the"
                    + " OpenAI-compatible API to ask, e.g. http://localhost:8000/v1)");
        }
        // No worker server: the address only names this process in the database's lock.
        CoordinatorSettings settings = runOptions.settings(spec, env,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null, WAIT_FOR_WORKERS,
                Duration.ofSeconds(5), null, modelApiOptions.modelApi);
        SuiteSubset subset = choices.subset(spec);
        if (choices.dryRun()) {
            return choices.printPlan(spec, settings, subset);
        }
        RunGates runGates = choices.gates(spec, runOptions, settings);
        String key = modelApiOptions.apiKey(spec, env);
        PrintWriter err = spec.commandLine().getErr();
        // Built without a start-up check: a suite with no sandboxed vignette never starts one, and
        // one that has them gets bubblewrap's own error at its first sample.
        try (Sandboxes sandboxes = Sandboxes.onPath(env.getOrDefault("PATH", System.getenv("PATH")), SandboxLimits.defaults(), sandboxes());
             ModelApiWorker worker = ModelApiWorker.open(modelApiOptions.modelApi, key, served(settings),
                modelApiOptions.capacity(), modelApiOptions.requests, modelApiOptions.requestTimeout, sandboxes)) {
            ModelApiCheck.Result checked = modelApiOptions.noModelCheck ? null : worker.check();
            boolean deferred = checked != null && checked.verdict() == ModelApiCheck.Verdict.TRANSIENT
                    && mayHoldAnswers(runOptions.database) && RunScoring.judgeModelOf(settings.scorer()) == null;
            if (deferred) {
                // Down, not wrong: the database's response cache may hold every answer, and a run
                // it answers whole needs no model. Asked again once the cache has served.
                err.println("the model API does not answer: " + checked.message() + "; the run goes on with the"
                        + " answers the response cache holds and stops before asking the model if any is left");
                err.flush();
            } else if (checked != null && !usable(checked, err)) {
                return EXIT_MODEL_API_UNUSABLE;
            }
            CoordinatorRun run = choices.applyTo(new CoordinatorRun(settings, spec.commandLine().getOut(), err,
                            choices.liveProgress(), Jars.selfCommand()), spec, runGates, subset)
                    // One worker, whose client retries 429s itself: there is no fleet to govern.
                    .withRateGovernor(false, 0)
                    .withDatabase(runOptions.database)
                    // A refusal for good (no prompt log-probabilities) ends the run at once: no
                    // other worker can connect, and no probation would change the model API.
                    .withInProcessWorker(worker.handle(), worker::refusesForGood);
            if (deferred) {
                run.withModelGate(() -> {
                    ModelApiCheck.Result again = worker.check();
                    return again.verdict() == ModelApiCheck.Verdict.OK ? null : refusal(again);
                });
            }
            try {
                return CoordinatorCommand.runInterruptibly(run);
            } catch (SuiteFormatException e) {
                return CoordinatorCommand.suiteProblems(spec, e);
            } catch (SuiteSubset.UnknownIdsException e) {
                throw CliErrors.invalid(spec, "--sample-id", e.getMessage());
            }
        }
    }

    /** --sandboxes, or the number of processors when it is not given. */
    private int sandboxes() {
        if (sandboxSlots == null) {
            return Runtime.getRuntime().availableProcessors();
        }
        if (sandboxSlots < 1 || sandboxSlots > 1024) {
            throw CliErrors.invalid(spec, "--sandboxes", "must be 1 to 1024, got " + sandboxSlots);
        }
        return sandboxSlots;
    }

    /**
     * Whether the database can hold answers to serve: a SQLite file that does not exist yet holds
     * none (and is not created for a run that cannot be answered).
     */
    private static boolean mayHoldAnswers(DatabaseTarget database) {
        return !(database instanceof DatabaseTarget.Sqlite sqlite) || Files.isRegularFile(sqlite.file());
    }

    /** The run's models, and its judge's: what the worker serves and the check asks for. */
    private static List<String> served(CoordinatorSettings settings) {
        List<String> models = new ArrayList<>(settings.models());
        String judge = RunScoring.judgeModelOf(settings.scorer());
        if (judge != null && !models.contains(judge)) {
            models.add(judge);
        }
        return models;
    }

    /**
     * Says what the check found, in the worker's words. A model API that is not up is as unusable
     * as a wrong one here: no worker is waiting for it elsewhere, so the command says so at once.
     */
    private static boolean usable(ModelApiCheck.Result result, PrintWriter err) {
        if (result.verdict() == ModelApiCheck.Verdict.OK) {
            err.println(result.message());
            err.flush();
            return true;
        }
        String message = result.message();
        err.println("the model API check failed: " + message + (message.endsWith("?") ? "" : ".")
                + " Nothing was run; exiting with code " + EXIT_MODEL_API_UNUSABLE + " (check --model-api,"
                + " --api-key or " + WorkerMain.API_KEY_ENV + ", and --model; --no-model-check skips the check)");
        err.flush();
        return false;
    }

    /** The line a run prints when answers are left to ask and the model API still does not serve them. */
    private static String refusal(ModelApiCheck.Result result) {
        return "the model API check failed: " + result.message() + "; answers are left that the response cache does"
                + " not hold, so the run stops before asking the model, exiting with code " + EXIT_MODEL_API_UNUSABLE
                + " (check --model-api, --api-key or " + WorkerMain.API_KEY_ENV + ", and --model)";
    }
}

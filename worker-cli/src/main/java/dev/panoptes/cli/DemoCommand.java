package dev.panoptes.cli;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.demo.DemoFleet;
import dev.panoptes.demo.DemoScratch;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.report.HtmlReport;
import dev.panoptes.report.ModelComparison;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunDataLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar demo}: the whole system on one machine with nothing to set up. A
 * stub OpenAI-compatible API serving two models of different quality on loopback, a coordinator
 * on an ephemeral port, three workers as separate processes running this same program over real
 * TCP, a bundled suite of arithmetic questions asked of both models three times (epochs) and
 * scored by the normalized scorer; one worker is killed with SIGKILL mid-run so that its jobs are
 * visibly sent to the others; then the summary, with confidence intervals and the comparison of
 * the two models, an HTML report, and {@code compare} of the two models with the vignettes whose
 * score changed; last, the shipped multiple-choice task file ({@code evals/arithmetic-task.yaml})
 * run as {@code eval --task} runs it, with acc and acc_norm and their intervals. The worker processes are {@link DemoFleet}'s; this command holds the options, the
 * run and what it prints.
 */
@Command(name = "demo",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {
            "Runs the whole system on this machine: a stub model API serving two models of different quality,"
                    + " a coordinator and worker processes, over real TCP; the suite is asked of both models 3 times"
                    + " and scored with the normalized scorer, and an HTML report is written at the end."
                    + " One worker is killed with SIGKILL mid-run to show its jobs being redelivered,"
                    + " and one more is started with a wrong --model-api to show it being quarantined while the"
                    + " others finish the run. Last, the shipped multiple-choice task file (lm-eval's format) is run"
                    + " against the same stub, scored by log-likelihood: acc and acc_norm with their intervals."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every job completed", "1:failed at run time", "2:invalid command line",
            "3:some jobs failed"})
public final class DemoCommand implements Callable<Integer> {
    /** The bundled suite, which lives beside the stub model that answers it. */
    public static final String SUITE_RESOURCE = "/dev/panoptes/demo/demo-suite.jsonl";
    public static final String MODEL = StubModelServer.MODEL;
    /** The demo's second model: wrong more often, and it ends its answers with a full stop. */
    public static final String SMALL_MODEL = StubModelServer.SMALL_MODEL;
    static final String SCORER = "normalized";
    public static final int EPOCHS = 3;
    static final String GROUP_BY = "op";
    /** Where the shipped multiple-choice task (evals/arithmetic-task*) is in the jar. */
    static final String TASK_RESOURCES = "/dev/panoptes/demo/task/";
    /** The task file, then its data files. */
    static final List<String> TASK_FILES = List.of("arithmetic-task.yaml", "arithmetic-task.jsonl",
            "arithmetic-task-train.jsonl");

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Mixin
    private ProgressOption progress;

    @Option(names = "--workers", order = 10, paramLabel = "N", defaultValue = "3",
            description = "Worker processes to start (at least 2, so one can die). Default: ${DEFAULT-VALUE}.")
    private int workers;

    @Option(names = "--capacity", order = 20, paramLabel = "N", defaultValue = "2",
            description = "Jobs each worker runs at once. Default: ${DEFAULT-VALUE}.")
    private int capacity;

    @Option(names = "--latency", order = 30, paramLabel = "DURATION", defaultValue = "20ms",
            converter = DurationConverter.class,
            description = "The stub model's latency per prompt. Default: ${DEFAULT-VALUE}.")
    private Duration latency;

    @Option(names = "--no-kill", order = 40, description = "Do not kill a worker mid-run.")
    private boolean noKill;

    @Option(names = "--no-misconfigured", order = 45,
            description = "Do not start the extra worker whose --model-api is wrong.")
    private boolean noMisconfigured;

    @Option(names = "--db", order = 50, paramLabel = "FILE",
            description = "Where to store results, kept after the demo. Default: a file in the demo's temporary"
                    + " folder, removed with it when the demo ends.")
    private Path db;

    @Option(names = "--out", order = 60, paramLabel = "FILE", defaultValue = "panoptes-demo-report.html",
            description = "Where to write the HTML report (it is replaced). Default: ${DEFAULT-VALUE} in the current"
                    + " folder.")
    private Path out;

    @Override
    public Integer call() throws Exception {
        verbose.applyQuietingLibrary();
        if (workers < 2) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for option '--workers': must be at least 2, got " + workers);
        }
        if (capacity < 1) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for option '--capacity': must be at least 1, got " + capacity);
        }
        Path report = out.toAbsolutePath();
        if (report.getParent() != null && !Files.isDirectory(report.getParent())) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--out': the folder "
                    + report.getParent() + " does not exist");
        }
        DemoFleet fleet = new DemoFleet(Jars.javaCommand(), workers, capacity, !noMisconfigured);
        // The suite's copy, the workers' logs and a default database live here only while the demo runs.
        try (DemoScratch scratch = DemoScratch.create(fleet::stopNow)) {
            try {
                return run(scratch.dir(), report, fleet);
            } finally {
                // Before the folder goes: the workers write their logs there.
                fleet.stop();
            }
        }
    }

    private int run(Path dir, Path report, DemoFleet fleet) throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        Path suite = dir.resolve("demo-suite.jsonl");
        try (InputStream in = DemoCommand.class.getResourceAsStream(SUITE_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the bundled suite " + SUITE_RESOURCE + " is missing from this build");
            }
            Files.copy(in, suite, StandardCopyOption.REPLACE_EXISTING);
        }
        Path results = db != null ? db : dir.resolve("demo.db");
        InetAddress loopback = InetAddress.getLoopbackAddress();
        CoordinatorSettings settings = new CoordinatorSettings(new InetSocketAddress(loopback, 0), suite, results, 4,
                "", null, SpecParams.NONE, 3, Duration.ofSeconds(60), Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofSeconds(30), List.of(MODEL, SMALL_MODEL), SCORER, EPOCHS, null, GROUP_BY);
        try (StubModelServer model = StubModelServer.start(new InetSocketAddress(loopback, 0), latency, 64)) {
            err.printf("demo: stub model API at %s (models %s and %s, %d ms per prompt)%n", model.baseUrl(), MODEL,
                    SMALL_MODEL, latency.toMillis());
            CoordinatorRun run = new CoordinatorRun(settings, out, err, progress.live(), Jars.selfCommand());
            run.onListening(address -> fleet.start(address, model.baseUrl().toString(), dir, err))
                    .alsoNotify(noKill ? ProgressListener.NONE : fleet.killer(run::say))
                    .alsoNotify(fleet.misconfiguredWatch());
            int code = CoordinatorCommand.runInterruptibly(run);
            out.print(fleet.closingLines());
            printComparison(results, db != null, out);
            if (code == 0) {
                code = runTask(dir, results, model.baseUrl().toString(), out, err);
            }
            writeReport(results, report);
            out.printf("%nReport:  %s (open it in a browser: xdg-open %s)%n", report.toUri(), report);
            if (db != null) {
                out.printf("Results: %s results --db %s --format csv%n", Jars.selfCommand(), results);
            } else {
                out.printf("Results: the demo's database and its workers' logs were temporary and are removed; run"
                        + " the demo with --db FILE to keep the results%n");
            }
            out.printf("Against a real model API: start 'java -jar worker.jar coordinator --suite FILE --model NAME',"
                    + " then on each GPU machine 'java -jar worker.jar --coordinator HOST:7070 --model-api"
                    + " http://localhost:8000/v1'.%n");
            out.flush();
            return code;
        }
    }

    /**
     * The third act: the shipped multiple-choice task (an lm-eval task file, scored by
     * log-likelihood), run as {@code eval --task} runs it against the same stub model, which
     * prints acc and acc_norm with their intervals. Forty documents, one request each: it adds
     * about a second.
     *
     * @return eval's exit code
     */
    private int runTask(Path dir, Path results, String modelApi, PrintWriter out, PrintWriter err)
            throws IOException {
        Path task = dir.resolve(TASK_FILES.get(0));
        for (String name : TASK_FILES) {
            try (InputStream in = DemoCommand.class.getResourceAsStream(TASK_RESOURCES + name)) {
                if (in == null) {
                    throw new IllegalStateException("the bundled task file " + TASK_RESOURCES + name
                            + " is missing from this build");
                }
                Files.copy(in, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        out.printf("%nMultiple choice by log-likelihood: evals/%s, an lm-eval task file, asked of %s as"
                + " '%s eval --task evals/%s --model %s --model-api URL' asks it (each choice's log-probability"
                + " after the question, all four in one /v1/completions request):%n", TASK_FILES.get(0), MODEL,
                Jars.selfCommand(), TASK_FILES.get(0), MODEL);
        out.flush();
        return WorkerMain.run(new String[]{"eval", "--task", task.toString(), "--model", MODEL, "--model-api",
            modelApi, "--db", results.toString(), "--no-progress"}, out, err, System.getenv());
    }

    /** The HTML report of every run in the database; a failure to write it does not fail the demo. */
    private void writeReport(Path results, Path report) {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(results)) {
            List<RunData> runs = new ArrayList<>();
            for (String id : RunDataLoader.runIds(store)) {
                runs.add(RunDataLoader.load(store, id));
            }
            HtmlReport.write(runs, report, GROUP_BY);
        } catch (IOException | RuntimeException e) {
            spec.commandLine().getErr().println("demo: could not write the report " + report + ": " + e.getMessage());
        }
    }

    /**
     * {@code compare} of the demo's two models, as the command prints it. The command line is shown
     * only for a database that outlives the demo: a temporary one is gone when the user reads it.
     */
    private void printComparison(Path results, boolean kept, PrintWriter out) {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(results)) {
            List<String> ids = RunDataLoader.runIds(store);
            if (ids.isEmpty()) {
                return;
            }
            RunData run = RunDataLoader.load(store, ids.get(0));
            out.printf("%n%s%n%s%s", kept ? Jars.selfCommand() + " compare --db " + results
                            : "compare of the two models (what 'compare --db FILE' prints for a kept --db):",
                    CompareCommand.heading(List.of(run),
                            List.of(kept ? results.toString() : "the demo's temporary database")),
                    CompareCommand.render(ModelComparison.compareAll(run, null), 5));
        } catch (RuntimeException e) {
            spec.commandLine().getErr().println("demo: could not compare the models: " + e.getMessage());
        }
    }
}

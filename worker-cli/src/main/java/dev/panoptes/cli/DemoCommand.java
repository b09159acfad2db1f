package dev.panoptes.cli;

import dev.panoptes.control.Job;
import dev.panoptes.control.Plural;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.CoordinatorSettings;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * {@code java -jar worker.jar demo}: the whole system on one machine with nothing to set up. A
 * stub OpenAI-compatible API serving two models of different quality on loopback, a coordinator
 * on an ephemeral port, three workers as separate processes running this same program over real
 * TCP, a bundled suite of arithmetic questions asked of both models three times (epochs) and
 * scored by the normalized scorer; one worker is killed with SIGKILL mid-run so that its jobs are
 * visibly sent to the others; then the summary, with confidence intervals and the comparison of
 * the two models, an HTML report, and {@code compare} of the two models with the vignettes whose
 * score changed.
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
                    + " others finish the run."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every job completed", "1:failed at run time", "2:invalid command line",
            "3:some jobs failed"})
public final class DemoCommand implements Callable<Integer> {
    public static final String SUITE_RESOURCE = "/dev/panoptes/demo/demo-suite.jsonl";
    public static final String MODEL = StubModelServer.MODEL;
    /** The demo's second model: wrong more often, and it ends its answers with a full stop. */
    public static final String SMALL_MODEL = StubModelServer.SMALL_MODEL;
    static final String SCORER = "normalized";
    public static final int EPOCHS = 3;
    static final String GROUP_BY = "op";

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

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
        // Written to from the coordinator's thread (startWorkers), read by the cleanup hook.
        List<Process> processes = new CopyOnWriteArrayList<>();
        // The suite's copy, the workers' logs and a default database live here only while the demo runs.
        try (DemoScratch scratch = DemoScratch.create(() -> stopWorkersNow(processes))) {
            try {
                return run(scratch.dir(), report, processes);
            } finally {
                // Before the folder goes: the workers write their logs there.
                stopWorkers(processes);
            }
        }
    }

    private int run(Path dir, Path report, List<Process> processes) throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        Path suite = dir.resolve(SUITE_RESOURCE);
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
            CoordinatorRun run = new CoordinatorRun(settings, out, err, System.console() != null, Jars.selfCommand());
            Victim victim = new Victim(processes, run::say);
            MisconfiguredWatch watch = new MisconfiguredWatch();
            run.onListening(address -> startWorkers(address, model, dir, processes, err))
                    .alsoNotify(noKill ? ProgressListener.NONE : victim)
                    .alsoNotify(watch);
            int code = CoordinatorCommand.runInterruptibly(run);
            if (victim.killed.get()) {
                out.printf("  demo-worker-1 was killed with SIGKILL mid-run: the %s it held %s sent to other"
                        + " workers%n", Plural.of(victim.redelivered.get(), "job"),
                        victim.redelivered.get() == 1 ? "was" : "were");
            }
            if (!noMisconfigured) {
                out.printf("  %s was started with a wrong --model-api (.../v2, and --no-model-check, without which it"
                        + " would have refused to start): its model API answered 404, %s, and its %s cost"
                        + " %s no attempt%n", MisconfiguredWatch.ID, watch.quarantined.get()
                        ? "it was quarantined" : "it was never quarantined (the run ended first)",
                        Plural.of(watch.failures.get(), "failed job"), watch.failures.get() == 1 ? "it" : "them");
            }
            printComparison(results, db != null, out);
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

    private void startWorkers(InetSocketAddress coordinator, StubModelServer model, Path dir, List<Process> processes,
                              PrintWriter err) {
        for (int i = 1; i <= workers; i++) {
            startWorker("demo-worker-" + i, model.baseUrl().toString(), List.of(), coordinator, dir, processes, err);
        }
        if (!noMisconfigured) {
            // The issue this shows: one typo on one box. The check at startup would catch it, so
            // it is skipped here to show what the coordinator does when a model API breaks later.
            String wrongApi = model.baseUrl().toString().replaceAll("/v1$", "/v2");
            startWorker(MisconfiguredWatch.ID, wrongApi, List.of("--no-model-check", "--model", MODEL), coordinator, dir,
                    processes, err);
        }
        err.flush();
    }

    private void startWorker(String id, String modelApi, List<String> extra, InetSocketAddress coordinator, Path dir,
                             List<Process> processes, PrintWriter err) {
        List<String> command = new ArrayList<>(Jars.javaCommand());
        command.addAll(List.of("--coordinator", CoordinatorRun.hostPort(coordinator), "--model-api", modelApi,
                "--id", id, "--capacity", Integer.toString(capacity), "--heartbeat", "1s",
                "--grace", "5s"));
        command.addAll(extra);
        Path log = dir.resolve(id + ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            processes.add(p);
            err.printf("demo: started worker process %s (pid %d), log %s%n", id, p.pid(), log);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start worker process " + id + ": " + e.getMessage(), e);
        }
    }

    /** Notes what happened to the misconfigured worker, for the closing lines. Scheduler thread. */
    private static final class MisconfiguredWatch implements ProgressListener {
        static final String ID = "demo-worker-misconfigured";
        final AtomicBoolean quarantined = new AtomicBoolean();
        final AtomicInteger failures = new AtomicInteger();

        @Override
        public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
            if (worker.id().equals(ID)) {
                failures.incrementAndGet();
            }
        }

        @Override
        public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
            if (worker.id().equals(ID)) {
                quarantined.set(true);
            }
        }
    }

    /**
     * For the shutdown hook (Ctrl-C, SIGTERM): the workers get SIGTERM and a few seconds to go,
     * then SIGKILL, so that none outlives the demo and their folder can be removed.
     */
    private static void stopWorkersNow(List<Process> processes) {
        processes.forEach(Process::destroy);
        try {
            for (Process p : processes) {
                if (!p.waitFor(3, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(2, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            processes.forEach(Process::destroyForcibly);
            Thread.currentThread().interrupt();
        }
    }

    private static void stopWorkers(List<Process> processes) throws InterruptedException {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * Kills the first worker with SIGKILL once a quarter of the jobs are done and it holds at
     * least one job, so that its jobs are redelivered. Runs on the scheduler thread: only
     * counts and sends a signal.
     */
    private static final class Victim implements ProgressListener {
        static final String VICTIM = "demo-worker-1";
        final AtomicBoolean killed = new AtomicBoolean();
        final AtomicInteger redelivered = new AtomicInteger();
        private final List<Process> processes;
        private final Consumer<String> console;
        private final Map<String, Integer> held = new HashMap<>();
        private int total;
        private int done;

        Victim(List<Process> processes, Consumer<String> console) {
            this.processes = processes;
            this.console = console;
        }

        @Override
        public void onStart(int toRun, int skipped) {
            total = toRun;
        }

        @Override
        public void onDispatched(Job job, WorkerHandle worker, int attempt) {
            held.merge(worker.id(), 1, Integer::sum);
            maybeKill();
        }

        @Override
        public void onCompleted(Job job, WorkerHandle worker, dev.panoptes.control.JobOutcome outcome,
                                dev.panoptes.control.store.ResultStore.Receipt receipt) {
            held.merge(worker.id(), -1, Integer::sum);
            done++;
            maybeKill();
        }

        @Override
        public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
            held.merge(worker.id(), -1, Integer::sum);
            if (killed.get() && worker.id().equals(VICTIM)) {
                redelivered.incrementAndGet();
            }
        }

        @Override
        public void onFailed(Job job, String reason, int attempts) {
            done++;
        }

        private void maybeKill() {
            int holding = held.getOrDefault(VICTIM, 0);
            if (killed.get() || done * 4 < total || holding < 1 || processes.isEmpty()) {
                return;
            }
            Process victim = processes.get(0);
            killed.set(true);
            victim.destroyForcibly();
            console.accept("demo: killed " + VICTIM + " (pid " + victim.pid() + ") with SIGKILL while it was running"
                    + " jobs");
        }
    }
}

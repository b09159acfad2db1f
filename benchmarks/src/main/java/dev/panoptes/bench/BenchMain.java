package dev.panoptes.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code java -jar benchmarks/target/benchmarks.jar NAME [options]}: runs one measurement of
 * BENCHMARKS.md and prints its figures as Markdown. Every measurement starts its coordinator and
 * workers as separate JVMs on loopback and stops them when it ends.
 */
@Command(name = "benchmarks.jar", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Panoptes benchmarks (issue 7). Each command prints its figures as Markdown; see BENCHMARKS.md.",
        subcommands = {
            BenchMain.Dispatch.class,
            BenchMain.DispatchSession.class,
            BenchMain.Floor.class,
            BenchMain.Codec.class,
            BenchMain.Store.class,
            BenchMain.Scale.class,
            BenchMain.Failure.class,
            BenchMain.Scheduling.class,
            BenchMain.E2e.class,
            BenchMain.RateLimit.class,
            BenchMain.ModelClient.class,
            BenchMain.JfrCommand.class,
            BenchMain.Suite.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:measured", "1:the measurement failed (the message says why)", "2:invalid command line"})
public final class BenchMain implements Callable<Integer> {
    private BenchMain() {
    }

    public static void main(String[] args) {
        CommandLine cli = new CommandLine(new BenchMain());
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("benchmark failed: " + e.getMessage());
            e.printStackTrace(commandLine.getErr());
            return 1;
        });
        System.exit(cli.execute(args));
    }

    @Override
    public Integer call() {
        new CommandLine(this).usage(System.out);
        return 2;
    }

    /** Options every measurement takes. */
    static final class Common {
        @Option(names = "--runs", description = "Measured runs; figures are their median with the min-max spread"
                + " (default: 5 for dispatch, 3 for most others; see each command).")
        Integer runs;

        @Option(names = "--out", paramLabel = "FILE", description = "Also append the Markdown report to FILE.")
        Path out;

        @Option(names = "--jvm-opt", paramLabel = "OPT", description = "An extra option for every child JVM of the"
                + " harness (repeatable).")
        List<String> jvmOpts = new ArrayList<>();

        @Option(names = "--coordinator-jvm-opt", paramLabel = "OPT", description = "An extra option for the"
                + " product's coordinator process in e2e and suite only (repeatable), e.g."
                + " -XX:StartFlightRecording=filename=c.jfr,settings=profile.")
        List<String> coordinatorJvmOpts = new ArrayList<>();

        @Option(names = {"-v", "--verbose"}, description = "Echo the children's replies on stderr.")
        boolean verbose;

        /** The runs asked for, or the command's default. */
        int runsOr(int fallback) {
            return runs == null ? fallback : runs;
        }

        int execute(String name, Body body) throws Exception {
            if (runs != null && runs < 1) {
                throw new CommandLine.ParameterException(new CommandLine(new BenchMain()),
                        "--runs must be at least 1, got " + runs);
            }
            Report report = new Report(System.out, out);
            Machine.report(System.out);
            try (BenchContext ctx = new BenchContext(name, verbose, jvmOpts, coordinatorJvmOpts)) {
                System.out.println("# " + name + ": child logs in " + ctx.logDir());
                int code = body.run(ctx, report);
                report.save();
                return code;
            }
        }
    }

    /** A measurement's body, given its context and report. */
    @FunctionalInterface
    interface Body {
        int run(BenchContext ctx, Report report) throws Exception;
    }

    /** Options of the two dispatch measurements and the floor. */
    static class DispatchOptions {
        @Mixin
        Common common;

        @Option(names = "--k", split = ",", description = "Jobs in flight (default: ${DEFAULT-VALUE}).",
                defaultValue = "1,16,64,256")
        List<Integer> ks;

        @Option(names = "--warmup-ms", description = "Warm-up of each run (default: ${DEFAULT-VALUE}).",
                defaultValue = "1000")
        long warmupMs;

        @Option(names = "--measure-ms", description = "Measured window of each run (default: ${DEFAULT-VALUE}).",
                defaultValue = "3000")
        long measureMs;

        @Option(names = "--jit-warmup-ms", description = "The first, discarded, round per system"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "5000")
        long jitWarmupMs;

        @Option(names = "--profile", description = "After the runs, profile one round with JFR and print"
                + " where the time goes.")
        boolean profile;

        @Option(names = "--profile-k", description = "K of the profiled round (default: ${DEFAULT-VALUE}).",
                defaultValue = "64")
        int profileK;

        @Option(names = "--profile-ms", description = "Length of the profiled round (default: ${DEFAULT-VALUE}).",
                defaultValue = "10000")
        long profileMs;

        @Option(names = "--selector-threads", description = "The coordinator's selector threads"
                + " (default: ${DEFAULT-VALUE}, the server's default on 2 cores).", defaultValue = "2")
        int selectorThreads;

        @Option(names = "--completion-threads", description = "The coordinator's completion threads"
                + " (default: ${DEFAULT-VALUE}, the server's default).", defaultValue = "2")
        int completionThreads;

        @Option(names = "--direct-completions", description = "Complete dispatch futures on the coordinator's"
                + " selector threads (ServerOptions.directCompletions), as the coordinator command does.")
        boolean directCompletions;

        @Option(names = "--tls", description = "Also measure the worker protocol over TLS, in the same rounds: a"
                + " second coordinator and real WorkerSession worker over TLS (a self-signed EC certificate), next"
                + " to a plaintext pair with the real WorkerSession, so that the two rows differ only by TLS.")
        boolean tls;

        DispatchBench.Options options(DispatchBench.Mode mode) {
            return new DispatchBench.Options(mode, ks, common.runsOr(5), warmupMs, measureMs, jitWarmupMs, profile,
                    profileK, profileMs, selectorThreads, completionThreads, directCompletions, tls);
        }
    }

    @Command(name = "dispatch", mixinStandardHelpOptions = true,
            description = "1a. Dispatch throughput and latency with the minimal fast fake worker, next to the raw"
                    + " echo floor.")
    static final class Dispatch extends DispatchOptions implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return common.execute("dispatch", (ctx, report) ->
                    DispatchBench.run(ctx, report, options(DispatchBench.Mode.FAKE)));
        }
    }

    @Command(name = "dispatch-session", mixinStandardHelpOptions = true,
            description = "1b. Dispatch throughput and latency with the real WorkerSession and a no-op runner,"
                    + " next to the raw echo floor.")
    static final class DispatchSession extends DispatchOptions implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return common.execute("dispatch-session", (ctx, report) ->
                    DispatchBench.run(ctx, report, options(DispatchBench.Mode.SESSION)));
        }
    }

    @Command(name = "floor", mixinStandardHelpOptions = true,
            description = "The raw-NIO echo floor alone: frames of the assign's and result's sizes, no JSON.")
    static final class Floor extends DispatchOptions implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return common.execute("floor", (ctx, report) ->
                    DispatchBench.run(ctx, report, options(DispatchBench.Mode.FLOOR)));
        }
    }

    @Command(name = "scale", mixinStandardHelpOptions = true,
            description = "2. Connection scale: N registered, heartbeating workers on one coordinator: heap, threads,"
                    + " idle CPU, time to register.")
    static final class Scale implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--n", split = ",", description = "Worker counts (default: ${DEFAULT-VALUE}).",
                defaultValue = "1000,5000,10000")
        List<Integer> ns;

        @Option(names = "--heartbeat-ms", description = "Heartbeat interval of both sides (default: ${DEFAULT-VALUE}).",
                defaultValue = "1000")
        long heartbeatMs;

        @Option(names = "--heartbeat-timeout-ms", description = "The coordinator's heartbeat timeout"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "3000")
        long heartbeatTimeoutMs;

        @Option(names = "--settle-ms", description = "Wait after registration before measuring"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "3000")
        long settleMs;

        @Option(names = "--cpu-window-ms", description = "CPU measurement window (default: ${DEFAULT-VALUE}).",
                defaultValue = "5000")
        long cpuWindowMs;

        @Option(names = "--connect-parallel", description = "Connects in progress at once on the worker side"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "256")
        int connectParallel;

        @Option(names = "--profile", description = "In the last run of the largest N, profile the coordinator with"
                + " JFR while the workers register and with perf while they heartbeat.")
        boolean profile;

        @Override
        public Integer call() throws Exception {
            return common.execute("scale", (ctx, report) -> ScaleBench.run(ctx, report,
                    new ScaleBench.Options(ns, common.runsOr(3), heartbeatMs, heartbeatTimeoutMs, settleMs, cpuWindowMs,
                            connectParallel, profile)));
        }
    }

    @Command(name = "failure", mixinStandardHelpOptions = true,
            description = "3. Failure detection: kill -9 of a worker holding jobs (time to fail and redispatch them),"
                    + " and SIGSTOP (time to reap it).")
    static final class Failure implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--stop-runs", description = "SIGSTOP repetitions (default: ${DEFAULT-VALUE}).",
                defaultValue = "5")
        int stopRuns;

        @Option(names = "--heartbeat-ms", description = "Heartbeat interval of both sides (default: ${DEFAULT-VALUE}).",
                defaultValue = "1000")
        long heartbeatMs;

        @Option(names = "--heartbeat-timeout-ms", description = "The coordinator's heartbeat timeout"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "3000")
        long heartbeatTimeoutMs;

        @Option(names = "--capacity", description = "Jobs the victim holds (default: ${DEFAULT-VALUE}).",
                defaultValue = "8")
        int capacity;

        @Override
        public Integer call() throws Exception {
            return common.execute("failure", (ctx, report) -> FailureBench.run(ctx, report,
                    new FailureBench.Options(common.runsOr(5), stopRuns, heartbeatMs, heartbeatTimeoutMs, capacity)));
        }
    }

    @Command(name = "scheduling", mixinStandardHelpOptions = true,
            description = "4. Scheduling: makespan of J jobs over remote workers of unequal speed, against the ideal.")
    static final class Scheduling implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--jobs", description = "Jobs per run (default: ${DEFAULT-VALUE}).", defaultValue = "2000")
        int jobs;

        @Option(names = "--service-us", split = ",", description = "Service time per job of each worker, in"
                + " microseconds (default: ${DEFAULT-VALUE}: speeds 1x, 2x, 4x).", defaultValue = "4000,2000,1000")
        List<Long> serviceMicros;

        @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
                defaultValue = "4")
        int capacity;

        @Option(names = "--profile", description = "After the runs, profile a few more with JFR and perf.")
        boolean profile;

        @Option(names = "--raw-timer", description = "Simulate each job with a plain timed wait, without taking off"
                + " the lateness this machine's timers show (they wake 100-200 us late), to see what that costs.")
        boolean rawTimer;

        @Option(names = "--warmup-runs", description = "Uncounted runs first, remote and local (default:"
                + " ${DEFAULT-VALUE}).", defaultValue = "10")
        int warmupRuns;

        @Override
        public Integer call() throws Exception {
            return common.execute("scheduling", (ctx, report) -> SchedulingBench.run(ctx, report,
                    new SchedulingBench.Options(common.runsOr(5), jobs, serviceMicros, capacity, profile,
                            warmupRuns, rawTimer)));
        }
    }

    @Command(name = "codec", mixinStandardHelpOptions = true,
            description = "Per-frame cost of the wire work of each side (encode assign, decode result, ...), in one"
                    + " thread: the evidence behind the dispatch profile.")
    static final class Codec implements Callable<Integer> {
        @Mixin
        Common common;

        @Override
        public Integer call() throws Exception {
            return common.execute("codec", (ctx, report) -> CodecBench.run(report, common.runsOr(5), 2000, 1000));
        }
    }

    @Command(name = "store", mixinStandardHelpOptions = true,
            description = "Records/s written by JdbcResultStore on SQLite, one transaction per outcome of 8 records"
                    + " (also part of e2e).")
    static final class Store implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--outcomes", description = "Outcomes per run (default: ${DEFAULT-VALUE}).",
                defaultValue = "5000")
        int outcomes;

        @Override
        public Integer call() throws Exception {
            return common.execute("store", (ctx, report) -> {
                List<StoreBench.Result> r = StoreBench.measure(report, common.runsOr(3), outcomes, 1000);
                E2eBench.reportStore(report, r, outcomes);
                return 0;
            });
        }
    }

    @Command(name = "suite", mixinStandardHelpOptions = true,
            description = "6. Suite size: the real coordinator command on a generated suite of a million vignettes:"
                    + " time to first dispatch, and peak heap under -Xmx = 3 x the file.")
    static final class Suite implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--vignettes", description = "Vignettes in the suite (default: ${DEFAULT-VALUE}).",
                defaultValue = "1000000")
        int vignettes;

        @Option(names = "--prompt-chars", split = ",", description = "Prompt lengths to generate, one suite each"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "150")
        List<Integer> promptChars;

        @Option(names = "--job-size", description = "Vignettes per job (default: ${DEFAULT-VALUE}, the coordinator's"
                + " default).", defaultValue = "8")
        int jobSize;

        @Option(names = "--heap-factor", description = "The coordinator's -Xmx as a multiple of the file size"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "3")
        double heapFactor;

        @Option(names = "--max-run-seconds", description = "Stop a run that has not finished by then"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "180")
        long maxRunSeconds;

        @Option(names = "--worker-jar", description = "The product binary (default: ${DEFAULT-VALUE}).",
                defaultValue = "worker-cli/target/worker.jar")
        Path workerJar;

        @Option(names = "--worker-capacity", description = "Capacity of the fast fake worker that serves the run"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "64")
        int workerCapacity;

        @Override
        public Integer call() throws Exception {
            return common.execute("suite", (ctx, report) -> SuiteBench.run(ctx, report,
                    new SuiteBench.Options(common.runsOr(3), vignettes, promptChars, jobSize, heapFactor,
                            maxRunSeconds, workerJar, workerCapacity)));
        }
    }

    @Command(name = "e2e", mixinStandardHelpOptions = true,
            description = "5. End to end: the real coordinator command and 4 real workers (capacity 8) against the stub"
                    + " model with a fixed latency; then JdbcResultStore's records/s on SQLite.")
    static final class E2e implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--vignettes", description = "Vignettes per run (default: ${DEFAULT-VALUE}, about 20 s at the"
                + " limit).", defaultValue = "12800")
        int vignettes;

        @Option(names = "--workers", description = "Worker processes (default: ${DEFAULT-VALUE}).", defaultValue = "4")
        int workers;

        @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
                defaultValue = "8")
        int capacity;

        @Option(names = "--latency-ms", description = "The stub model's latency per call (default: ${DEFAULT-VALUE}).",
                defaultValue = "50")
        long latencyMs;

        @Option(names = "--job-size", description = "Vignettes per job (default: ${DEFAULT-VALUE}, the coordinator's"
                + " default).", defaultValue = "8")
        int jobSize;

        @Option(names = "--worker-jar", description = "The product binary (default: ${DEFAULT-VALUE}).",
                defaultValue = "worker-cli/target/worker.jar")
        Path workerJar;

        @Option(names = "--store-outcomes", description = "Outcomes per run of the store measurement"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "5000")
        int storeOutcomes;

        @Option(names = "--profile", description = "After the runs, profile one more: JFR on a worker, perf on a"
                + " worker, the coordinator and the stub model.")
        boolean profile;

        @Option(names = "--stub-nagle", description = "Run the stub model with Nagle's algorithm on (the JDK"
                + " HttpServer default, and the stub's before eb744b7), which adds a delayed-ACK wait of about 40 ms to"
                + " each call.")
        boolean stubNagle;

        @Override
        public Integer call() throws Exception {
            return common.execute("e2e", (ctx, report) -> E2eBench.run(ctx, report,
                    new E2eBench.Options(common.runsOr(3), vignettes, workers, capacity, latencyMs, jobSize, workerJar,
                            storeOutcomes, !stubNagle, profile)));
        }
    }

    @Command(name = "ratelimit", mixinStandardHelpOptions = true,
            description = "The fleet against a model API that answers 429 beyond a threshold in flight: the real"
                    + " coordinator and workers, with the coordinator's rate governor and without, side by side.")
    static final class RateLimit implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--vignettes", description = "Vignettes per run (default: ${DEFAULT-VALUE}).",
                defaultValue = "6000")
        int vignettes;

        @Option(names = "--workers", description = "Worker processes (default: ${DEFAULT-VALUE}).", defaultValue = "4")
        int workers;

        @Option(names = "--capacity", description = "Capacity of each worker (default: ${DEFAULT-VALUE}).",
                defaultValue = "16")
        int capacity;

        @Option(names = "--latency-ms", description = "The stub model's latency per call (default: ${DEFAULT-VALUE}).",
                defaultValue = "50")
        long latencyMs;

        @Option(names = "--threshold", description = "Requests in flight beyond which the stub answers 429"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "24")
        int threshold;

        @Option(names = "--job-size", description = "Vignettes per job (default: ${DEFAULT-VALUE}).", defaultValue = "1")
        int jobSize;

        @Option(names = "--worker-jar", description = "The product binary (default: ${DEFAULT-VALUE}).",
                defaultValue = "worker-cli/target/worker.jar")
        Path workerJar;

        @Override
        public Integer call() throws Exception {
            return common.execute("ratelimit", (ctx, report) -> RateLimitBench.run(ctx, report,
                    new RateLimitBench.Options(common.runsOr(3), vignettes, workers, capacity, latencyMs, threshold,
                            jobSize, workerJar)));
        }
    }

    @Command(name = "model-client", mixinStandardHelpOptions = true,
            description = "CPU per model call in the worker's JVM, per HTTP client (java.net.http as used before,"
                    + " java.net.http tuned, Apache HttpClient 5, Jetty 12, the product), at N calls in flight"
                    + " against a fast local OpenAI-compatible server; threads started.")
    static final class ModelClient implements Callable<Integer> {
        @Mixin
        Common common;

        @Option(names = "--clients", split = ",", description = "Clients to measure (default: ${DEFAULT-VALUE}).",
                defaultValue = "jdk-today,jdk-tuned,apache,jetty,product")
        List<String> clients;

        @Option(names = "--n", split = ",", description = "Calls in flight against the 0 ms server"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "8,64,256")
        List<Integer> ns;

        @Option(names = "--slow-n", description = "Calls in flight against the delayed server, 0 for none"
                + " (default: ${DEFAULT-VALUE}).", defaultValue = "64")
        int slowN;

        @Option(names = "--slow-ms", description = "The delayed server's delay (default: ${DEFAULT-VALUE}).",
                defaultValue = "20")
        long slowMs;

        @Option(names = "--jit-warmup-calls", description = "Calls at N=64 before anything is measured, per client"
                + " JVM (default: ${DEFAULT-VALUE}).", defaultValue = "10000")
        int jitWarmupCalls;

        @Option(names = "--warmup-calls", description = "Unmeasured calls before each measured batch, enough for"
                + " the JIT to settle on the batch's pace (default: ${DEFAULT-VALUE}).", defaultValue = "5000")
        int warmupCalls;

        @Option(names = "--calls", description = "Measured calls per batch (default: ${DEFAULT-VALUE}).",
                defaultValue = "10000")
        int calls;

        @Option(names = "--max-connections", description = "Each client's connection limit (default:"
                + " ${DEFAULT-VALUE}, the product's default).", defaultValue = "256")
        int maxConnections;

        @Override
        public Integer call() throws Exception {
            for (String c : clients) {
                if (!ModelClientKinds.NAMES.contains(c)) {
                    throw new CommandLine.ParameterException(new CommandLine(this), "unknown client '" + c
                            + "'; use some of " + ModelClientKinds.NAMES);
                }
            }
            return common.execute("model-client", (ctx, report) -> ModelClientBench.run(ctx, report,
                    new ModelClientBench.Options(clients, ns, slowN, slowMs, common.runsOr(3), jitWarmupCalls,
                            warmupCalls, calls, maxConnections)));
        }
    }

    @Command(name = "jfr", mixinStandardHelpOptions = true,
            description = "Summarises a JFR recording (any JVM's): samples per thread, hottest methods by self and"
                    + " inclusive samples. For profiling a run by hand, e.g. suite --jvm-opt=-XX:StartFlightRecording=...")
    static final class JfrCommand implements Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "FILE", description = "The .jfr recording.")
        Path file;

        @Option(names = "--top", description = "Rows per table (default: ${DEFAULT-VALUE}).", defaultValue = "30")
        int top;

        @Option(names = "--first-seconds", description = "Only the first S seconds of the recording.")
        Double firstSeconds;

        @Override
        public Integer call() throws Exception {
            Report report = new Report(System.out, null);
            JfrSummary.print(report, file, file.getFileName().toString(), top,
                    firstSeconds == null ? Double.MAX_VALUE : firstSeconds);
            return 0;
        }
    }
}

package dev.panoptes.bench;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.cli.WorkerMain;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.eval.sandbox.CommandResult;
import dev.panoptes.eval.sandbox.Sandbox;
import dev.panoptes.eval.sandbox.SandboxLimits;
import dev.panoptes.eval.sandbox.Sandboxes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code sandbox}: the worker's sandboxes (bubblewrap) measured in this JVM, as a worker uses them
 * ({@link Sandboxes#open}, {@link Sandbox#run}): the start-up time of one sandbox (until its
 * driver answers, median and p99 over many starts), how many a worker holds at once while each
 * runs commands (start time of the last, command latency, commands/s), and the model turns per
 * second of one worker ({@code eval}, in this JVM) on {@code evals/agent.jsonl} against the stub
 * model answering at once.
 *
 * <p>Runs on picocli's thread; the concurrency part starts one thread per sandbox.
 */
@Command(name = "sandbox", mixinStandardHelpOptions = true,
        description = "Sandbox start-up time (median, p99), sandboxes held at once while each runs commands, and"
                + " model turns/s of one worker on evals/agent.jsonl against the stub model.")
final class SandboxCommand extends BenchCommand {
    private static final Pattern RUN_TOOK = Pattern.compile("Run complete in (\\d+\\.\\d) s");

    @Option(names = "--starts", description = "Sandbox starts per run, after 5 unmeasured (default: ${DEFAULT-VALUE}).",
            defaultValue = "100")
    int starts;

    @Option(names = "--at-once", split = ",", paramLabel = "N[,N...]", description = "Sandboxes held at once, one"
            + " measurement each (default: ${DEFAULT-VALUE}).", defaultValue = "1,2,4,8,16,32,64")
    List<Integer> atOnce;

    @Option(names = "--window", description = "Seconds each of the sandboxes held at once runs commands"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "3")
    int windowSeconds;

    @Option(names = "--suite", description = "The agent suite (default: ${DEFAULT-VALUE}).",
            defaultValue = "evals/agent.jsonl")
    Path suite;

    @Option(names = "--epochs", description = "Epochs of the agent suite per run (default: ${DEFAULT-VALUE}).",
            defaultValue = "5")
    int epochs;

    @Option(names = "--sandboxes", split = ",", paramLabel = "N[,N...]", description = "The worker's --sandboxes"
            + " for the agent suite, one measurement each (default: ${DEFAULT-VALUE}).", defaultValue = "2,8")
    List<Integer> workerSandboxes;

    SandboxCommand() {
        super(3);
    }

    @Override
    void validate() {
        if (starts < 1 || windowSeconds < 1 || epochs < 1 || atOnce.stream().anyMatch(n -> n < 1)
                || workerSandboxes.stream().anyMatch(n -> n < 1)) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--starts, --window, --epochs and every --at-once and --sandboxes must be at least 1");
        }
        if (!Files.isRegularFile(suite)) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "no agent suite at " + suite.toAbsolutePath() + "; run from the repository root or give --suite");
        }
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        int most = atOnce.stream().mapToInt(Integer::intValue).max().orElse(1);
        try (Sandboxes sandboxes = Sandboxes.onPath(System.getenv("PATH"), SandboxLimits.defaults(), most)) {
            String problem = sandboxes.check();
            if (problem != null) {
                System.err.println("this machine cannot run sandboxes: " + problem);
                return 1;
            }
            startUp(sandboxes, report);
            heldAtOnce(sandboxes, report);
        }
        agentTurns(report);
        return 0;
    }

    /** Starts and closes one sandbox after another; each start timed until its driver is ready. */
    private void startUp(Sandboxes sandboxes, Report report) throws InterruptedException {
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> max = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sandboxes.open().close();
        }
        for (int run = 0; run < runs(); run++) {
            double[] ms = new double[starts];
            for (int i = 0; i < starts; i++) {
                long t0 = System.nanoTime();
                Sandbox s = sandboxes.open();
                ms[i] = (System.nanoTime() - t0) / 1e6;
                s.close();
            }
            Arrays.sort(ms);
            p50.add(percentile(ms, 0.50));
            p99.add(percentile(ms, 0.99));
            max.add(ms[ms.length - 1]);
            report.progress(String.format(Locale.ROOT, "start-up run %d: p50 %.1f ms, p99 %.1f ms (load %.2f)",
                    run + 1, p50.get(run), p99.get(run), Machine.loadAverage()));
        }
        report.line("");
        report.line("### Sandbox start-up (" + runs() + " runs of " + starts + " starts one after another, after 5"
                + " unmeasured; from Sandboxes.open() to its driver's 'ready'; median (min-max) of the runs)");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("p50 ms", "p99 ms", "max ms"),
                List.of(List.of(Stats.of(p50).format(1), Stats.of(p99).format(1), Stats.of(max).format(1))));
    }

    /**
     * N sandboxes opened at once (N threads), each then running {@code echo} in a loop for the
     * window: whether all start, how long the last took to start, and the commands' latency and
     * rate while all are held.
     */
    private void heldAtOnce(Sandboxes sandboxes, Report report) throws InterruptedException {
        List<List<String>> rows = new ArrayList<>();
        for (int n : atOnce) {
            List<Double> lastStart = new ArrayList<>();
            List<Double> rate = new ArrayList<>();
            List<Double> p50 = new ArrayList<>();
            List<Double> p99 = new ArrayList<>();
            int failedMost = 0;
            for (int run = 0; run < runs(); run++) {
                Held held = hold(sandboxes, n);
                failedMost = Math.max(failedMost, held.failed);
                lastStart.add(held.lastStartMs);
                rate.add(held.commands / (double) windowSeconds);
                p50.add(held.p50Ms);
                p99.add(held.p99Ms);
                report.progress(String.format(Locale.ROOT, "%d at once, run %d: last started after %.0f ms, %d"
                        + " commands, p99 %.1f ms, %d failed (load %.2f)", n, run + 1, held.lastStartMs,
                        held.commands, held.p99Ms, held.failed, Machine.loadAverage()));
            }
            rows.add(List.of(Integer.toString(n), Stats.of(lastStart).format(0), Stats.of(rate).formatRate(),
                    Stats.of(p50).format(1), Stats.of(p99).format(1), Integer.toString(failedMost)));
        }
        report.line("");
        report.line("### Sandboxes held at once (" + runs() + " runs each; N threads open one each at the same"
                + " time, then each runs `echo` one after another for " + windowSeconds + " s; median (min-max))");
        report.line("");
        report.table(List.of("at once", "last started after ms", "commands/s (all)", "command p50 ms",
                "command p99 ms", "failed (most in a run)"), rows);
    }

    private Held hold(Sandboxes sandboxes, int n) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(n);
        ConcurrentLinkedQueue<Double> starts = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Double> commands = new ConcurrentLinkedQueue<>();
        AtomicInteger failed = new AtomicInteger();
        long[] t0 = new long[1];
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    try (Sandbox s = sandboxes.open()) {
                        starts.add((System.nanoTime() - t0[0]) / 1e6);
                        long end = System.nanoTime() + windowSeconds * 1_000_000_000L;
                        while (System.nanoTime() - end < 0) {
                            long c0 = System.nanoTime();
                            CommandResult r = s.run("echo ok", Duration.ofSeconds(10));
                            if (!r.succeeded()) {
                                failed.incrementAndGet();
                                break;
                            }
                            commands.add((System.nanoTime() - c0) / 1e6);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    failed.incrementAndGet();
                } finally {
                    done.countDown();
                }
            }, "held-sandbox-" + i);
            t.setDaemon(true);
            t.start();
        }
        t0[0] = System.nanoTime();
        go.countDown();
        done.await();
        double[] c = commands.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double last = starts.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        return new Held(last, c.length, c.length == 0 ? Double.NaN : percentile(c, 0.5),
                c.length == 0 ? Double.NaN : percentile(c, 0.99), failed.get());
    }

    private record Held(double lastStartMs, int commands, double p50Ms, double p99Ms, int failed) {
    }

    /**
     * The product's {@code eval} (one worker, in this JVM) of the agent suite against the stub
     * model answering at once: model turns (chat completions the stub answered) per second of the
     * run as it reports its own time.
     */
    private void agentTurns(Report report) throws Exception {
        List<List<String>> rows = new ArrayList<>();
        try (StubModelServer stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ZERO, 64)) {
            Path dir = Files.createTempDirectory("panoptes-bench-sandbox");
            evalOnce(stub, dir.resolve("warm-up.db"), workerSandboxes.get(0)); // JIT, class loading
            for (int n : workerSandboxes) {
                List<Double> turnsPerSecond = new ArrayList<>();
                List<Double> samplesPerSecond = new ArrayList<>();
                double turnsPerSample = 0;
                for (int run = 0; run < runs(); run++) {
                    long before = stub.requestCount();
                    double seconds = evalOnce(stub, dir.resolve("n" + n + "-" + run + ".db"), n);
                    long turns = stub.requestCount() - before;
                    int samples = samples();
                    turnsPerSecond.add(turns / seconds);
                    samplesPerSecond.add(samples / seconds);
                    turnsPerSample = turns / (double) samples;
                    report.progress(String.format(Locale.ROOT, "agent suite, --sandboxes %d, run %d: %d turns in %.1f s"
                            + " (load %.2f)", n, run + 1, turns, seconds, Machine.loadAverage()));
                }
                rows.add(List.of(Integer.toString(n), Stats.of(turnsPerSecond).format(1),
                        Stats.of(samplesPerSecond).format(2), String.format(Locale.ROOT, "%.1f", turnsPerSample)));
            }
        }
        report.line("");
        report.line("### One worker on " + suite + " x " + epochs + " epochs (" + samples() + " samples, each in a"
                + " fresh sandbox) against the stub model at 0 ms (" + runs() + " runs each after a warm-up;"
                + " `eval` in this JVM, time as its summary reports it; median (min-max))");
        report.line("");
        report.table(List.of("--sandboxes", "model turns/s", "samples/s", "turns per sample"), rows);
    }

    private int samples() throws java.io.IOException {
        long lines = Files.readAllLines(suite).stream().filter(l -> !l.isBlank()).count();
        return (int) lines * epochs;
    }

    /** One {@code eval}; returns the seconds its summary reports. */
    private double evalOnce(StubModelServer stub, Path db, int sandboxes) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"eval", "--suite", suite.toString(), "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", db.toString(), "--epochs", String.valueOf(epochs),
                "--sandboxes", String.valueOf(sandboxes), "--no-progress", "--log-level", "WARN"},
                new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        Matcher m = RUN_TOOK.matcher(out.toString());
        if (exit != 0 || !m.find()) {
            throw new IllegalStateException("eval exited " + exit + ":\n" + out + err);
        }
        return Double.parseDouble(m.group(1));
    }

    private static double percentile(double[] sorted, double p) {
        int i = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}

package dev.panoptes.bench.dispatch;

import dev.panoptes.bench.fake.BenchRunners;
import dev.panoptes.bench.fake.BenchTls;
import dev.panoptes.bench.fake.FastFakeWorker;
import dev.panoptes.bench.fake.SessionWorker;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Latency;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Measurement 1, dispatch throughput and latency: one connection, K jobs in flight, a
 * coordinator JVM ({@link DispatchCoordinator}) and a worker JVM, next to the raw-NIO echo floor
 * ({@link EchoCoordinator} and {@link EchoWorker}) measured in the same run, round for round, so
 * that every figure is also a fraction of the ceiling on this machine at this moment.
 *
 * <p>Method: one JIT warm-up round per system at K=64 (or at the largest K, the worker's
 * capacity, when that is smaller), then for each K, {@code runs} times a round of each system in turn
 * (floor, then Panoptes, then Panoptes over TLS with {@code --tls}), so that a noisy moment hits
 * all of them; each round is a short warm-up then a measured window. Figures are the median of
 * the runs with the min-max spread. The process CPU of both JVMs is read from /proc at the
 * window's edges, giving CPU per job. {@code --profile} then hands the same JVMs to
 * {@link DispatchProfile}.
 *
 * <p>The parent's main thread drives every child; the children start in {@link #run} and die with
 * the {@link BenchContext}. The table's columns are parsed by {@code benchmarks/compare-commits.sh}:
 * keep their order.
 */
public final class DispatchBench {
    /** Which worker answers the coordinator. */
    public enum Mode {
        /** The minimal fast fake worker: isolates the coordinator. */
        FAKE("fake worker"),
        /** The real WorkerSession with a no-op runner: the whole system. */
        SESSION("real WorkerSession"),
        /** Only the raw echo floor. */
        FLOOR("floor only");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    /** How to run it: the options of the {@code dispatch}, {@code dispatch-session} and {@code floor} commands. */
    public record Options(Mode mode, List<Integer> ks, int runs, long warmupMs, long measureMs, long jitWarmupMs,
                   boolean profile, int profileK, long profileMs, int selectorThreads, int completionThreads,
                   boolean directCompletions, boolean tls) {
    }

    /** One measured window. */
    public record Round(double jobsPerSecond, Latency latency, double driverCpuUsPerJob, double workerCpuUsPerJob,
                 double driverSysUsPerJob, double workerSysUsPerJob, String threads) {
    }

    public static final Duration ROUND_TIMEOUT = Duration.ofSeconds(120);
    /** Peers' figures on a machine like this one (issue 7): Netty 4.2 + Jackson. */
    public static final double NETTY_K64 = 133_000;
    public static final double NETTY_K256 = 205_000;
    public static final double NETTY_P50_K1_US = 81;

    private DispatchBench() {
    }

    public static int run(BenchContext ctx, Report report, Options given) throws Exception {
        Options o = given;
        if (o.tls() && o.mode() == Mode.FAKE) {
            // The fake worker is a blocking socket: both rows use the real WorkerSession instead.
            report.progress("--tls: both rows use the real WorkerSession (the fake worker speaks no TLS)");
            o = new Options(Mode.SESSION, o.ks(), o.runs(), o.warmupMs(), o.measureMs(), o.jitWarmupMs(), o.profile(),
                    o.profileK(), o.profileMs(), o.selectorThreads(), o.completionThreads(), o.directCompletions(),
                    true);
        }
        int maxK = o.ks().stream().mapToInt(Integer::intValue).max().orElse(1);
        int[] sizes = frameSizes();
        int assignBytes = sizes[0];
        int resultBytes = sizes[1];
        report.progress("frames: assign " + assignBytes + " bytes, result " + resultBytes
                + " bytes (bodies, plus the 4-byte prefix)");

        Child echoDriver = Child.start(ctx, "echo-coordinator", EchoCoordinator.class, heap(),
                List.of(Integer.toString(assignBytes), Integer.toString(resultBytes)));
        int echoPort = echoDriver.expect("READY", Duration.ofSeconds(30)).intValue("port");
        Child echoWorker = Child.start(ctx, "echo-worker", EchoWorker.class, heap(),
                List.of(Integer.toString(echoPort), Integer.toString(assignBytes), Integer.toString(resultBytes)));
        echoDriver.expect("CONNECTED", Duration.ofSeconds(30));

        Child driver = null;
        Child worker = null;
        if (o.mode() != Mode.FLOOR) {
            driver = Child.start(ctx, "coordinator", DispatchCoordinator.class, heap(),
                    List.of(Integer.toString(o.selectorThreads()), Integer.toString(o.completionThreads()),
                            Boolean.toString(o.directCompletions())));
            int port = driver.expect("READY", Duration.ofSeconds(30)).intValue("port");
            if (o.mode() == Mode.FAKE) {
                worker = Child.start(ctx, "fake-worker", FastFakeWorker.class, heap(),
                        List.of(Integer.toString(port), "fake-1", Integer.toString(maxK), "1000", "0"));
            } else {
                worker = Child.start(ctx, "session-worker", SessionWorker.class, heap(),
                        List.of(Integer.toString(port), "1000", "session-1:" + maxK + ":echo"));
            }
            driver.send("await-worker");
            Kv w = driver.expect("WORKER", Duration.ofSeconds(60));
            report.progress("worker " + w.get("id") + " registered with capacity " + w.get("capacity"));
        }
        Child tlsDriver = null;
        Child tlsWorker = null;
        if (o.tls() && driver != null) {
            Path store = BenchTls.createKeyStore(Files.createTempDirectory("panoptes-bench-tls"));
            List<String> jvm = new ArrayList<>(heap());
            jvm.add("-D" + BenchTls.PROPERTY + "=" + store);
            tlsDriver = Child.start(ctx, "coordinator-tls", DispatchCoordinator.class, jvm,
                    List.of(Integer.toString(o.selectorThreads()), Integer.toString(o.completionThreads()),
                            Boolean.toString(o.directCompletions())));
            int port = tlsDriver.expect("READY", Duration.ofSeconds(30)).intValue("port");
            tlsWorker = Child.start(ctx, "session-worker-tls", SessionWorker.class, jvm,
                    List.of(Integer.toString(port), "1000", "session-tls:" + maxK + ":echo"));
            tlsDriver.send("await-worker");
            Kv w = tlsDriver.expect("WORKER", Duration.ofSeconds(60));
            report.progress("TLS worker " + w.get("id") + " registered with capacity " + w.get("capacity"));
        }

        // Never past the worker's capacity, the largest K: a warm-up at a K the worker cannot hold
        // would wait for answers to jobs the coordinator is not allowed to send.
        int warmK = Math.min(64, maxK);
        report.progress("JIT warm-up: " + o.jitWarmupMs() + " ms per system at K=" + warmK);
        round(echoDriver, echoWorker, warmK, o.jitWarmupMs(), 1000);
        if (driver != null) {
            round(driver, worker, warmK, o.jitWarmupMs(), 1000);
        }
        if (tlsDriver != null) {
            round(tlsDriver, tlsWorker, warmK, o.jitWarmupMs(), 1000);
        }
        Map<Integer, List<Round>> overTls = new LinkedHashMap<>();

        Map<Integer, List<Round>> floor = new LinkedHashMap<>();
        Map<Integer, List<Round>> panoptes = new LinkedHashMap<>();
        for (int k : o.ks()) {
            for (int r = 0; r < o.runs(); r++) {
                Round f = round(echoDriver, echoWorker, k, o.warmupMs(), o.measureMs());
                floor.computeIfAbsent(k, x -> new ArrayList<>()).add(f);
                String line = String.format(Locale.ROOT, "K=%d run %d: floor %,.0f jobs/s p50 %.1f us", k, r + 1,
                        f.jobsPerSecond(), f.latency().p50Us());
                if (driver != null) {
                    Round p = round(driver, worker, k, o.warmupMs(), o.measureMs());
                    panoptes.computeIfAbsent(k, x -> new ArrayList<>()).add(p);
                    line += String.format(Locale.ROOT, "; panoptes %,.0f jobs/s p50 %.1f us p99 %.1f us (%s)",
                            p.jobsPerSecond(), p.latency().p50Us(), p.latency().p99Us(), p.threads());
                }
                if (tlsDriver != null) {
                    Round t = round(tlsDriver, tlsWorker, k, o.warmupMs(), o.measureMs());
                    overTls.computeIfAbsent(k, x -> new ArrayList<>()).add(t);
                    line += String.format(Locale.ROOT, "; TLS %,.0f jobs/s p50 %.1f us", t.jobsPerSecond(),
                            t.latency().p50Us());
                }
                report.progress(line + String.format(Locale.ROOT, " [load %.2f]", Machine.loadAverage()));
            }
        }

        report.line("");
        report.line("### dispatch: " + o.mode().label + " (" + o.runs() + " runs per K, " + o.warmupMs()
                + " ms warm-up + " + o.measureMs() + " ms measured per run; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ". Frames: assign " + (4 + assignBytes) + " B, result "
                + (4 + resultBytes) + " B on the wire.");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        for (int k : o.ks()) {
            List<Round> f = floor.get(k);
            Stats fRate = Stats.of(f.stream().map(Round::jobsPerSecond).toList());
            Stats fP50 = Stats.of(f.stream().map(x -> x.latency().p50Us()).toList());
            if (driver == null) {
                rows.add(List.of(Integer.toString(k), fRate.formatRate(), fP50.format(1),
                        Stats.of(f.stream().map(x -> x.latency().p99Us()).toList()).format(1),
                        Stats.of(f.stream().map(Round::driverCpuUsPerJob).toList()).format(2),
                        Stats.of(f.stream().map(Round::workerCpuUsPerJob).toList()).format(2)));
                continue;
            }
            List<Round> p = panoptes.get(k);
            Stats rate = Stats.of(p.stream().map(Round::jobsPerSecond).toList());
            double[] fractions = new double[p.size()];
            for (int i = 0; i < p.size(); i++) {
                fractions[i] = 100.0 * p.get(i).jobsPerSecond() / f.get(i).jobsPerSecond();
            }
            rows.add(List.of(Integer.toString(k), rate.formatRate(),
                    Stats.of(p.stream().map(x -> x.latency().p50Us()).toList()).format(1),
                    Stats.of(p.stream().map(x -> x.latency().p99Us()).toList()).format(1),
                    Stats.of(p.stream().map(x -> x.latency().p999Us()).toList()).format(1),
                    fRate.formatRate(), fP50.format(1), Stats.of(fractions).format(1) + " %",
                    cpu(p, Round::driverCpuUsPerJob, Round::driverSysUsPerJob),
                    cpu(p, Round::workerCpuUsPerJob, Round::workerSysUsPerJob)));
        }
        if (driver == null) {
            report.table(List.of("K", "floor jobs/s", "p50 us", "p99 us", "coordinator-side CPU us/job",
                    "worker-side CPU us/job"), rows);
        } else {
            report.table(List.of("K", "Panoptes jobs/s", "p50 us", "p99 us", "p99.9 us", "floor jobs/s",
                    "floor p50 us", "Panoptes / floor", "coordinator CPU us/job (of which kernel)",
                    "worker CPU us/job (of which kernel)"), rows);
            report.line("");
            report.line("Busiest coordinator threads in the last run of each K (% of one core):");
            report.line("");
            for (int k : o.ks()) {
                List<Round> p = panoptes.get(k);
                report.line("- K=" + k + ": " + p.get(p.size() - 1).threads());
            }
            report.line("");
            targets(report, panoptes);
        }

        if (tlsDriver != null) {
            tlsTable(report, panoptes, overTls);
        }

        if (o.profile() && driver != null) {
            DispatchProfile.run(ctx, report, o, driver, worker);
        }
        return 0;
    }

    /** Plaintext and TLS side by side, from the same rounds: what TLS costs per job. */
    private static void tlsTable(Report report, Map<Integer, List<Round>> plain, Map<Integer, List<Round>> tls) {
        report.line("");
        report.line("Plaintext vs TLS (real WorkerSession both; TLS: self-signed EC P-256 certificate, the JDK's"
                + " default protocol and suites; CPU of both JVMs per job):");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        for (Map.Entry<Integer, List<Round>> e : tls.entrySet()) {
            int k = e.getKey();
            for (boolean isTls : new boolean[]{false, true}) {
                List<Round> r = isTls ? e.getValue() : plain.get(k);
                double cpu = Stats.of(r.stream().map(x -> x.driverCpuUsPerJob() + x.workerCpuUsPerJob()).toList())
                        .median();
                rows.add(List.of(Integer.toString(k), isTls ? "TLS" : "plaintext",
                        Stats.of(r.stream().map(Round::jobsPerSecond).toList()).formatRate(),
                        Stats.of(r.stream().map(x -> x.latency().p50Us()).toList()).format(1),
                        cpu(r, Round::driverCpuUsPerJob, Round::driverSysUsPerJob),
                        cpu(r, Round::workerCpuUsPerJob, Round::workerSysUsPerJob),
                        String.format(Locale.ROOT, "%.2f", cpu)));
            }
        }
        report.table(List.of("K", "transport", "jobs/s", "p50 us", "coordinator CPU us/job (kernel)",
                "worker CPU us/job (kernel)", "total CPU us/job"), rows);
    }

    private static String cpu(List<Round> rounds, java.util.function.ToDoubleFunction<Round> total,
                              java.util.function.ToDoubleFunction<Round> kernel) {
        return String.format(Locale.ROOT, "%.2f (%.2f)",
                Stats.of(rounds.stream().map(total::applyAsDouble).toList()).median(),
                Stats.of(rounds.stream().map(kernel::applyAsDouble).toList()).median());
    }

    private static void targets(Report report, Map<Integer, List<Round>> panoptes) {
        report.line("Targets (issue 7: beat the best peer by 20 % at K=64 and K=256, match Netty's p50 at K=1):");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        if (panoptes.containsKey(64)) {
            double m = Stats.of(panoptes.get(64).stream().map(Round::jobsPerSecond).toList()).median();
            rows.add(List.of("K=64 jobs/s", String.format(Locale.ROOT, "%,.0f", m),
                    String.format(Locale.ROOT, ">= %,.0f (1.2 x Netty %,.0f)", 1.2 * NETTY_K64, NETTY_K64),
                    m >= 1.2 * NETTY_K64 ? "met" : "not met"));
        }
        if (panoptes.containsKey(256)) {
            double m = Stats.of(panoptes.get(256).stream().map(Round::jobsPerSecond).toList()).median();
            rows.add(List.of("K=256 jobs/s", String.format(Locale.ROOT, "%,.0f", m),
                    String.format(Locale.ROOT, ">= %,.0f (1.2 x Netty %,.0f)", 1.2 * NETTY_K256, NETTY_K256),
                    m >= 1.2 * NETTY_K256 ? "met" : "not met"));
        }
        if (panoptes.containsKey(1)) {
            double m = Stats.of(panoptes.get(1).stream().map(x -> x.latency().p50Us()).toList()).median();
            rows.add(List.of("K=1 p50", String.format(Locale.ROOT, "%.1f us", m),
                    String.format(Locale.ROOT, "<= %.0f us (Netty)", NETTY_P50_K1_US),
                    m <= NETTY_P50_K1_US ? "met" : "not met"));
        }
        report.table(List.of("target", "measured (median)", "goal", "verdict"), rows);
    }

    /** One round on a driver (Panoptes or echo) and its worker; CPU of both read at the window's edges. */
    public static Round round(Child driver, Child worker, int k, long warmupMs, long measureMs) {
        driver.send(Kv.line("run", "k", k, "warmupMs", warmupMs, "measureMs", measureMs));
        driver.expect("MEASURE-START", ROUND_TIMEOUT);
        long d0 = driver.cpuNanos();
        long w0 = worker.cpuNanos();
        long ds0 = Machine.processSystemCpuNanos(driver.pid());
        long ws0 = Machine.processSystemCpuNanos(worker.pid());
        driver.expect("MEASURE-END", ROUND_TIMEOUT);
        long d1 = driver.cpuNanos();
        long w1 = worker.cpuNanos();
        long ds1 = Machine.processSystemCpuNanos(driver.pid());
        long ws1 = Machine.processSystemCpuNanos(worker.pid());
        Kv r = driver.expect("RESULT", ROUND_TIMEOUT);
        long jobs = r.longValue("jobs");
        long nanos = r.longValue("nanos");
        if (jobs == 0) {
            throw new IllegalStateException("no job completed in the measured window of " + driver.name());
        }
        return new Round(jobs * 1e9 / nanos, Latency.from(r), (d1 - d0) / 1e3 / jobs, (w1 - w0) / 1e3 / jobs,
                (ds1 - ds0) / 1e3 / jobs, (ws1 - ws0) / 1e3 / jobs, r.get("threads", "-"));
    }

    /** Body sizes of the assign and result frames of the driver's jobs: {assign, result}. */
    public static int[] frameSizes() {
        MessageCodec codec = new MessageCodec();
        Job sample = new Job(JobId.of(DispatchCoordinator.sampleJobId()),
                new EvalSpec("bench", List.of(new Vignette("v0", DispatchCoordinator.PROMPT))));
        int assign = codec.encode(new Message.Assign(sample)).length;
        int result = codec.encode(new Message.Result(BenchRunners.echo(sample))).length;
        return new int[] {assign, result};
    }

    /** The same fixed heap for every JVM of this measurement, so that no side is favoured by sizing. */
    private static List<String> heap() {
        return List.of("-Xms512m", "-Xmx512m");
    }
}

package dev.panoptes.bench.model;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Kv;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The model-client measurement: what one model call costs the worker's JVM in CPU, per HTTP
 * client, with the calls in flight a worker has (its capacity).
 *
 * <p>A fast OpenAI-compatible server ({@link ModelServerNode}) runs in one JVM with two listeners,
 * one answering at once and one after a delay; each client ({@link ModelClientKinds}) runs in a
 * JVM of its own ({@link ModelClientNode}), fresh for every run. Per run and client: a JIT
 * warm-up batch, then for each configuration (N calls in flight against the 0 ms listener for
 * each N, then N against the delayed one) a warm-up batch and a measured batch, whose CPU is
 * read from the client's {@code /proc/<pid>/stat} (user + system) before and after. The figures
 * are medians over the runs, with the min-max spread.
 */
public final class ModelClientBench {
    /** How to run it: the options of the {@code model-client} command. */
    public record Options(List<String> kinds, List<Integer> ns, int slowN, long slowMs, int runs, int jitWarmupCalls,
                   int warmupCalls, int calls, int maxConnections) {
    }

    /** One configuration: calls in flight, and the server's delay. */
    private record Config(int n, long delayMs) {
        String label() {
            return "N=" + n + (delayMs == 0 ? "" : ", " + delayMs + " ms server");
        }
    }

    /** One measured batch. */
    private record Measure(double cpuUsPerCall, double callsPerSecond, long threadsStarted, long peakThreads) {
    }

    private ModelClientBench() {
    }

    public static int run(BenchContext ctx, Report report, Options o) {
        List<Config> configs = new ArrayList<>();
        o.ns().forEach(n -> configs.add(new Config(n, 0)));
        if (o.slowN() > 0) {
            configs.add(new Config(o.slowN(), o.slowMs()));
        }
        Child server = Child.start(ctx, "model-server", ModelServerNode.class, List.of(),
                List.of("0," + o.slowMs()));
        String[] urls = server.expect("READY", Duration.ofSeconds(30)).get("urls").split(",");
        report.progress("server at " + urls[0] + " (0 ms) and " + urls[1] + " (" + o.slowMs() + " ms); clients "
                + o.kinds() + "; per run and client: " + o.jitWarmupCalls() + " JIT warm-up calls, then per"
                + " configuration " + o.warmupCalls() + " warm-up and " + o.calls() + " measured calls");
        Map<String, Map<Config, List<Measure>>> results = new LinkedHashMap<>();
        Map<String, String> descriptions = new LinkedHashMap<>();
        for (int r = 1; r <= o.runs(); r++) {
            for (String kind : o.kinds()) {
                try (Child client = Child.start(ctx, "client-" + kind + "-" + r, ModelClientNode.class, List.of(),
                        List.of(kind, urls[0], Integer.toString(o.maxConnections())))) {
                    client.expect("READY", Duration.ofSeconds(30));
                    batch(client, urls[0], 64, o.jitWarmupCalls());
                    for (Config c : configs) {
                        String url = c.delayMs() == 0 ? urls[0] : urls[1];
                        batch(client, url, c.n(), o.warmupCalls());
                        long cpu0 = client.cpuNanos();
                        Kv done = batch(client, url, c.n(), o.calls());
                        long cpu = client.cpuNanos() - cpu0;
                        Measure m = new Measure(cpu / 1000.0 / o.calls(), o.calls() * 1000.0
                                / Math.max(1, done.longValue("ms")), done.longValue("started"),
                                done.longValue("peak"));
                        results.computeIfAbsent(kind, k -> new LinkedHashMap<>())
                                .computeIfAbsent(c, k -> new ArrayList<>()).add(m);
                        report.progress(String.format(Locale.ROOT, "run %d %-9s %-18s %6.0f us CPU/call %,8.0f"
                                        + " calls/s  threads started %d, peak %d [load %.2f]", r, kind, c.label(),
                                m.cpuUsPerCall(), m.callsPerSecond(), m.threadsStarted(), m.peakThreads(),
                                Machine.loadAverage()));
                    }
                }
            }
        }
        for (String kind : o.kinds()) {
            descriptions.put(kind, describe(kind));
        }
        report.line("");
        report.line("### model-client (" + o.runs() + " runs, a fresh client JVM per run and client; per"
                + " configuration " + o.warmupCalls() + " warm-up then " + o.calls() + " measured calls, after "
                + o.jitWarmupCalls() + " JIT warm-up calls; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ". Server: one selector thread, keep-alive, a ~500-byte chat"
                + " completion; client and server JVMs share the machine.");
        report.line("");
        report.line("Client JVM CPU per call, in microseconds (user + system from /proc, whole JVM: I/O, callbacks,"
                + " GC, JIT):");
        report.line("");
        report.table(header("client", configs), rows(o.kinds(), configs, results,
                m -> m.cpuUsPerCall(), 0));
        report.line("");
        report.line("Calls per second (bounded by the two cores the client shares with the server at 0 ms, and by"
                + " N / delay with the delayed server):");
        report.line("");
        report.table(header("client", configs), rows(o.kinds(), configs, results,
                m -> m.callsPerSecond(), -1));
        report.line("");
        report.line("Threads the client JVM started during the measured batch / its peak live threads (whole JVM;"
                + " java.net.http as used today also has N caller threads, made before the batch):");
        report.line("");
        List<List<String>> threadRows = new ArrayList<>();
        for (String kind : o.kinds()) {
            List<String> row = new ArrayList<>();
            row.add(kind);
            for (Config c : configs) {
                List<Measure> ms = results.get(kind).get(c);
                Stats started = Stats.of(ms.stream().map(Measure::threadsStarted).toList());
                Stats peak = Stats.of(ms.stream().map(Measure::peakThreads).toList());
                row.add(String.format(Locale.ROOT, "%.0f / %.0f", started.median(), peak.median()));
            }
            threadRows.add(row);
        }
        report.table(header("client", configs), threadRows);
        report.line("");
        for (Map.Entry<String, String> d : descriptions.entrySet()) {
            report.line("- `" + d.getKey() + "`: " + d.getValue());
        }
        return 0;
    }

    private static Kv batch(Child client, String url, int n, int calls) {
        client.send(Kv.line("run", "url", url, "n", n, "calls", calls));
        Kv done = client.expect("DONE", Duration.ofMinutes(10));
        if (done.longValue("failed") > 0) {
            throw new IllegalStateException(client.name() + ": " + done.get("failed") + " of " + calls
                    + " calls failed at N=" + n + ", first: " + done.get("error"));
        }
        return done;
    }

    private static List<String> header(String first, List<Config> configs) {
        List<String> h = new ArrayList<>();
        h.add(first);
        configs.forEach(c -> h.add(c.label()));
        return h;
    }

    private static List<List<String>> rows(List<String> kinds, List<Config> configs,
                                           Map<String, Map<Config, List<Measure>>> results,
                                           ToDoubleFunction<Measure> figure,
                                           int decimals) {
        List<List<String>> rows = new ArrayList<>();
        for (String kind : kinds) {
            List<String> row = new ArrayList<>();
            row.add(kind);
            for (Config c : configs) {
                Stats s = Stats.of(results.get(kind).get(c).stream().mapToDouble(figure).toArray());
                row.add(decimals < 0 ? s.formatRate() : s.format(decimals));
            }
            rows.add(row);
        }
        return rows;
    }

    /** The report's line about a client, without starting it. */
    private static String describe(String kind) {
        switch (kind) {
            case "jdk-today":
                return "java.net.http as HttpModelClient used it before this change (default executor,"
                        + " sendAsync with a String body, the caller's thread blocked in get; one caller thread per"
                        + " call in flight)";
            case "jdk-tuned":
                return "java.net.http tuned: HTTP/1.1, its own 2-thread executor, byte[] bodies, each call chained"
                        + " from the completion of another";
            case "apache":
                return "Apache HttpClient 5.6 async (I/O threads: one per core), chained from completions";
            case "apache-minimal":
                return "Apache HttpClient 5.6 minimal async (no exec chain: no route planning, proxies or protocol"
                        + " interceptors), one I/O thread, LAX pool, chained from completions";
            case "apache-classic":
                return "Apache HttpClient 5.6 classic (blocking), one caller thread per call in flight blocked in its"
                        + " socket read (the hand-offs a worker would add to and from those threads not counted)";
            case "jetty":
                return "Jetty 12.1 HttpClient (its default thread pool), chained from completions";
            case "product":
                return "the product, HttpModelClient.completeAsync: Apache HttpClient 5.6 async with one I/O thread,"
                        + " plus request JSON, response parsing, the retry policy and the per-attempt timer";
            default:
                return kind;
        }
    }
}

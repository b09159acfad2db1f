package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Child;
import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.ProductCli;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.bench.harness.SuiteFiles;
import dev.panoptes.bench.model.StubModelNode;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Issue 30's speed row: a multiple-choice task of {@code questions} 4-choice questions (an lm-eval
 * task file, scored by log-likelihood) through the real {@code coordinator --task} and real worker
 * processes against the product's stub model, beside a generation suite of the same size
 * ({@code coordinator --suite}) on the same fleet. Per run: model requests per question, counted
 * at the stub (one {@code /v1/completions} request per question, its 4 choices as one list of
 * prompts, plus each worker's one capability check), answers per second (the whole run, from the
 * coordinator listening to its last stored record), and the coordinator's CPU per question, from
 * /proc. The workers are started once and kept (they reconnect to each new coordinator), and one
 * warm-up run of each kind is not counted, as in {@link E2eBench}.
 *
 * <p>The parent's main thread starts, polls and stops every process; nothing here is shared.
 */
public final class ChoiceBench {
    /** How to run it: the options of the {@code choice} command. */
    public record Options(int runs, int questions, int workers, int capacity, long latencyMs, int jobSize,
                          Path workerJar) {
    }

    private record Run(String kind, double answersPerSecond, double requestsPerQuestion,
                       double coordinatorCpuUsPerQuestion, long records, String summary) {
    }

    private static final long POLL_MS = 50;
    private static final String MODEL = "stub";

    private ChoiceBench() {
    }

    /** Runs the measurement and writes its rows to {@code report}; 0 when every run stored every answer. */
    public static int run(BenchContext ctx, Report report, Options o) throws Exception {
        ProductCli cli = new ProductCli(o.workerJar());
        Path dir = Files.createTempDirectory("panoptes-choice-bench");
        List<Run> choice = new ArrayList<>();
        List<Run> generation = new ArrayList<>();
        double limit = o.workers() * o.capacity() * 1000.0 / o.latencyMs();
        try {
            Path task = writeTask(dir, o.questions());
            Path suite = dir.resolve("generation.jsonl");
            SuiteFiles.writeArithmetic(suite, o.questions());
            int warm = Math.max(100, o.questions() / 10);
            Path warmTask = writeTask(dir.resolve("warm"), warm);
            Path warmSuite = dir.resolve("warm").resolve("generation.jsonl");
            SuiteFiles.writeArithmetic(warmSuite, warm);
            Child stub = Child.start(ctx, "stub-model", StubModelNode.class, List.of(),
                    List.of(Long.toString(o.latencyMs()), Integer.toString(4 * o.workers() * o.capacity())));
            String url = stub.expect("READY", Duration.ofSeconds(30)).get("url");
            report.progress(String.format(Locale.ROOT, "stub model at %s (%d ms per call); %d workers x capacity %d,"
                    + " job size %d; limit %.0f requests/s; %,d questions per run; binary %s", url, o.latencyMs(),
                    o.workers(), o.capacity(), o.jobSize(), limit, o.questions(), cli.describe()));
            int port = ProductCli.freePort();
            List<Child> workers = new ArrayList<>();
            report.progress("warm-up: one run of each kind of " + warm + " questions, not counted");
            once(ctx, cli, o, "choice", List.of("--task", warmTask.toString()), warm, dir.resolve("warm-c"), url, port,
                    workers, stub);
            once(ctx, cli, o, "generation", List.of("--suite", warmSuite.toString()), warm, dir.resolve("warm-g"), url,
                    port, workers, stub);
            for (int r = 1; r <= o.runs(); r++) {
                // Alternated, so that a machine growing busier weighs on both kinds alike.
                Run c = once(ctx, cli, o, "choice", List.of("--task", task.toString()), o.questions(),
                        dir.resolve("choice" + r), url, port, workers, stub);
                choice.add(c);
                progress(report, r, c);
                Run g = once(ctx, cli, o, "generation", List.of("--suite", suite.toString()), o.questions(),
                        dir.resolve("generation" + r), url, port, workers, stub);
                generation.add(g);
                progress(report, r, g);
            }
            for (Child w : workers) {
                w.close();
            }
            stub.close();
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
        report.line("");
        report.line("### choice (" + o.runs() + " runs of each kind after one warm-up run each; the real coordinator"
                + " command and " + o.workers() + " real worker processes, capacity " + o.capacity() + ", job size "
                + o.jobSize() + ", stub model " + o.latencyMs() + " ms per call; " + String.format(Locale.ROOT, "%,d",
                o.questions()) + " questions per run; median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ". Binary: `" + cli.describe() + "`.");
        report.line("");
        List<List<String>> rows = new ArrayList<>();
        for (List<Run> runs : List.of(choice, generation)) {
            Run first = runs.get(0);
            rows.add(List.of(first.kind().equals("choice") ? "4-choice task by log-likelihood (`coordinator --task`)"
                            : "generation suite, same questions' size (`coordinator --suite`)",
                    Stats.of(runs.stream().map(Run::requestsPerQuestion).toList()).format(4),
                    Stats.of(runs.stream().map(Run::answersPerSecond).toList()).format(1),
                    Stats.of(runs.stream().map(Run::coordinatorCpuUsPerQuestion).toList()).format(0)));
        }
        report.table(List.of("run", "model requests per question (at the stub)", "answers/s (whole run)",
                "coordinator CPU per question (us)"), rows);
        report.line("");
        report.line(String.format(Locale.ROOT, "Limit: %d workers x %d slots / %d ms = %.0f requests/s, so answers/s"
                + " at one request per question can be at most that.", o.workers(), o.capacity(), o.latencyMs(), limit));
        report.line("");
        report.line("The coordinator's own summary of the last multiple-choice run:");
        report.line("");
        report.line("```");
        report.line(choice.get(choice.size() - 1).summary());
        report.line("```");
        return 0;
    }

    private static void progress(Report report, int r, Run run) {
        report.progress(String.format(Locale.ROOT, "run %d, %s: %.4f requests per question, %.1f answers/s,"
                        + " coordinator %.0f us CPU per question, %d records [load %.2f]", r, run.kind(),
                run.requestsPerQuestion(), run.answersPerSecond(), run.coordinatorCpuUsPerQuestion(), run.records(),
                Machine.loadAverage()));
    }

    /**
     * Writes an lm-eval task file and its {@code count} 4-choice arithmetic questions into {@code dir}
     * (the right answer at a seeded random place among three near misses).
     */
    static Path writeTask(Path dir, int count) throws IOException {
        Files.createDirectories(dir);
        SplittableRandom random = new SplittableRandom(30);
        try (BufferedWriter w = Files.newBufferedWriter(dir.resolve("choice.jsonl"), StandardCharsets.UTF_8)) {
            for (int i = 0; i < count; i++) {
                long a = random.nextInt(1000);
                long b = random.nextInt(1000);
                long sum = a + b;
                int right = random.nextInt(4);
                List<String> choices = new ArrayList<>();
                for (int c = 0; c < 4; c++) {
                    choices.add("\"" + (sum + (c - right) * (1 + random.nextInt(9))) + "\"");
                }
                choices.set(right, "\"" + sum + "\"");
                w.write("{\"question\": \"What is " + a + " + " + b + "?\", \"choices\": [" + String.join(", ", choices)
                        + "], \"answer\": " + right + "}\n");
            }
        }
        Path task = dir.resolve("choice.yaml");
        Files.writeString(task, String.join("\n", "task: bench_choice", "dataset_path: json", "dataset_kwargs:",
                "  data_files:", "    test: choice.jsonl", "output_type: multiple_choice", "test_split: test",
                "doc_to_text: \"Question: {{question}}\\nAnswer:\"", "doc_to_choice: choices", "doc_to_target: answer",
                "metric_list:", "  - metric: acc", "  - metric: acc_norm", ""));
        return task;
    }

    private static Run once(BenchContext ctx, ProductCli cli, Options o, String kind, List<String> what, long total,
                            Path runDir, String url, int port, List<Child> workers, Child stub) throws Exception {
        Files.createDirectories(runDir);
        Path db = runDir.resolve("results.db");
        List<String> args = new ArrayList<>(List.of("coordinator", "--listen", "127.0.0.1:" + port));
        args.addAll(what);
        args.addAll(List.of("--model", MODEL, "--db", db.toString(), "--job-size", Integer.toString(o.jobSize())));
        try (Child coordinator = Child.startCommand(ctx, "choice-coordinator-" + runDir.getFileName(),
                cli.command(ctx.coordinatorJvmArgs(), args))) {
            ProductCli.awaitListening(port, 60_000, coordinator);
            long start = System.nanoTime();
            long cpu0 = coordinator.cpuNanos();
            long cpu = cpu0;
            long requests0 = requests(stub);
            if (workers.isEmpty()) {
                for (int i = 1; i <= o.workers(); i++) {
                    workers.add(Child.startCommand(ctx, "choice-worker-" + i, cli.command(List.of(),
                            List.of("--coordinator", "127.0.0.1:" + port, "--model-api", url, "--model", MODEL,
                                    "--capacity", Integer.toString(o.capacity()), "--requests",
                                    Integer.toString(o.capacity()), "--id", "choice-worker-" + i))));
                }
            }
            long lastRecord = -1;
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (coordinator.isAlive() && System.nanoTime() - deadline < 0) {
                long c = coordinator.cpuNanos();
                if (c >= 0) {
                    cpu = c;
                }
                if (E2eBench.countRecords(db) >= total) {
                    lastRecord = System.nanoTime();
                    break;
                }
                Thread.sleep(POLL_MS);
            }
            int exit = coordinator.waitFor(Duration.ofSeconds(60));
            long records = E2eBench.countRecords(db);
            if (records < total || exit != 0) {
                throw new IllegalStateException("the " + kind + " run stored " + records + " of " + total
                        + " records (exit " + exit + "); see " + ctx.logDir());
            }
            long requests = requests(stub) - requests0;
            return new Run(kind, total * 1e9 / (lastRecord - start), requests / (double) total,
                    (cpu - cpu0) / 1e3 / total, records, String.join("\n", coordinator.drainLines()));
        }
    }

    /** Completions the stub model has served so far (chat and text alike). */
    private static long requests(Child stub) {
        stub.send("count");
        return stub.expect("COUNT", Duration.ofSeconds(10)).longValue("requests");
    }
}

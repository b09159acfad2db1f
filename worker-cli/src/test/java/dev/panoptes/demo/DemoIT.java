package dev.panoptes.demo;

import dev.panoptes.cli.DemoCommand;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteReader;
import dev.panoptes.report.ReportPage;
import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * End to end with real processes: {@code java -jar worker.jar demo} runs a coordinator, a stub
 * model API and four worker processes of the built jar over TCP (one with a wrong model API), and
 * kills one worker with SIGKILL mid-run. Every vignette must end stored exactly once, by the
 * healthy workers, and the redeliveries must show.
 */
@Timeout(120)
class DemoIT {
    private static final Path JAR = Path.of(System.getProperty("worker.jar", "target/worker.jar"));

    @TempDir
    Path dir;

    @Test
    void theDemoSurvivesAKilledWorkerAndStoresEveryVignetteExactlyOnce() throws Exception {
        Path db = dir.resolve("demo.db");
        Path output = dir.resolve("demo.out");
        Path reportOut = dir.resolve("the-report.html");
        // Each demo gets a temporary folder of its own, to see what it leaves there.
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Path stoppedTmp = Files.createDirectories(dir.resolve("tmp-stopped"));
        Process demo = demoProcess(demo(tmp, "--db", db.toString(), "--latency", "5ms", "--out",
                reportOut.toString()))
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        // Alongside, a slow demo stopped by SIGTERM (as Ctrl-C stops it) mid-run.
        Path stoppedOutput = dir.resolve("stopped.out");
        Process stopped = demoProcess(demo(stoppedTmp, "--latency", "2s", "--workers", "2",
                "--no-misconfigured", "--no-kill", "--out", dir.resolve("stopped.html").toString()))
                .redirectErrorStream(true)
                .redirectOutput(stoppedOutput.toFile())
                .start();
        await().atMost(Duration.ofSeconds(60)).until(() -> !stopped.isAlive()
                || Files.readString(stoppedOutput).contains("started worker process demo-worker-2"));
        assertThat(leftIn(stoppedTmp)).as("while it runs").hasSize(1);
        List<ProcessHandle> stoppedWorkers = stopped.descendants().toList();
        assertThat(stoppedWorkers).as("worker processes of the stopped demo").hasSizeGreaterThanOrEqualTo(2);
        stopped.destroy();
        assertThat(stopped.waitFor(20, TimeUnit.SECONDS)).as("the stopped demo exited").isTrue();
        assertThat(leftIn(stoppedTmp)).as("left by the stopped demo; it printed:%n%s",
                Files.readString(stoppedOutput)).isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> stoppedWorkers.stream().noneMatch(ProcessHandle::isAlive));

        assertThat(demo.waitFor(100, TimeUnit.SECONDS)).as("the demo finished").isTrue();
        String printed = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(demo.exitValue()).as(printed).isZero();
        assertThat(leftIn(tmp)).as("the demo's temporary folder is removed").isEmpty();
        assertThat(printed).contains("Report:  " + reportOut.toUri());

        assertThat(printed).contains("killed demo-worker-1").contains("with SIGKILL")
                .contains("Run complete").contains("answers:     1800 of 1800 stored");
        Matcher redelivered = Pattern.compile("redelivered: (\\d+) jobs?;").matcher(printed);
        assertThat(redelivered.find()).as(printed).isTrue();
        assertThat(Integer.parseInt(redelivered.group(1))).as("jobs redelivered").isPositive();
        // The second act: a worker with a wrong --model-api loses no job and fails none.
        assertThat(printed).contains("demo-worker-misconfigured was started with a wrong --model-api")
                .contains("its model API answered 404").contains("450 of 450 complete, 0 failed");
        // Two models, three epochs, the normalized scorer: the small model's full stops are forgiven.
        assertThat(printed).contains("accuracy (normalized, scoring 1), mean score per model; 95% CI: Wilson, clustered by"
                        + " vignette:")
                .contains("stub-arithmetic-small - stub-arithmetic: -").contains("op=*: ");
        // It ends with compare of its two models: the same paired difference, and the vignettes that changed.
        Matcher paired = Pattern.compile("\n    stub-arithmetic-small - stub-arithmetic: (-\\d\\.\\d{3}, 95% CI [^\n]*)")
                .matcher(printed);
        assertThat(paired.find()).as(printed).isTrue();
        assertThat(printed).contains(" compare --db ")
                .contains("\n  stub-arithmetic-small - stub-arithmetic: " + paired.group(1) + "\n")
                .containsPattern("\n    changed: \\d+ vignettes; the first 5:\n");
        // The third act: the shipped multiple-choice task file, acc and acc_norm with their intervals.
        assertThat(printed).contains("Multiple choice by log-likelihood: evals/arithmetic-task.yaml")
                .contains("arithmetic-task.yaml: 40 vignettes").contains("40 of 40 stored")
                .containsPattern("accuracy \\(acc, scoring 1\\)[^\n]*\n\\s+" + DemoCommand.MODEL
                        + ": 0\\.\\d{3} \\(95% CI 0\\.\\d{3}-[01]\\.\\d{3}")
                .containsPattern("acc_norm [^\n]*\n\\s+" + DemoCommand.MODEL
                        + ": 0\\.\\d{3} \\(95% CI 0\\.\\d{3}-[01]\\.\\d{3}");
        Matcher report = Pattern.compile("Report:  file:(\\S+) ").matcher(printed);
        assertThat(report.find()).as(printed).isTrue();
        Path reportFile = Path.of(java.net.URI.create("file:" + report.group(1)));
        assertThat(reportFile).isEqualTo(reportOut);
        ReportPage page = new ReportPage(Files.readString(reportFile));
        Matcher runId = Pattern.compile("\\(run id ([0-9a-f]{16})\\)").matcher(printed);
        assertThat(runId.find()).isTrue();
        for (String model : List.of(DemoCommand.MODEL, DemoCommand.SMALL_MODEL)) {
            Matcher line = Pattern.compile("\n    " + Pattern.quote(model) + ": (\\d\\.\\d{3}) \\(95% CI "
                    + "(\\d\\.\\d{3})-(\\d\\.\\d{3}), SE (\\d\\.\\d{3}), n=900, 300 vignettes\\)").matcher(printed);
            assertThat(line.find()).as("the summary line of %s in:%n%s", model, printed).isTrue();
            assertThat(page.figure("accuracy", runId.group(1), model, "accuracy")).isEqualTo(line.group(1));
            assertThat(page.figure("accuracy", runId.group(1), model, "ci-low")).isEqualTo(line.group(2));
            assertThat(page.figure("accuracy", runId.group(1), model, "ci-high")).isEqualTo(line.group(3));
            assertThat(page.figure("accuracy", runId.group(1), model, "stderr")).isEqualTo(line.group(4));
        }

        Suite suite;
        try (InputStream in = DemoCommand.class.getResourceAsStream(DemoCommand.SUITE_RESOURCE)) {
            suite = new SuiteReader().read(in, "demo", DemoCommand.SUITE_RESOURCE);
        }
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            // The coordinator's run; the task's run (its answers log-likelihoods) is the other.
            store.forEachRecord(r -> {
                if (r.record().response() == null || !r.record().response().startsWith("{\"resps\":")) {
                    records.add(r);
                }
            });
        }
        Set<String> answers = new HashSet<>();
        records.forEach(r -> answers.add(r.context().model() + "/" + r.context().epoch() + "/" + r.record().vignetteId()));
        int expected = suite.vignettes().size() * 2 * DemoCommand.EPOCHS;
        assertThat(records).hasSize(expected);
        assertThat(answers).hasSize(expected);
        assertThat(records).allSatisfy(r -> {
            assertThat(r.workerId()).startsWith("demo-worker-").isNotEqualTo("demo-worker-misconfigured");
            // Epoch 0 is asked without a seed, as a one-epoch run asks it; epoch e > 0 with seed e;
            // the model the run asked is the one that answered.
            int epoch = r.context().epoch();
            assertThat(r.record().response()).isEqualTo(StubModelServer.answer(promptOf(suite, r), r.context().model(),
                    epoch == 0 ? null : (long) epoch));
            assertThat(r.record().model()).isEqualTo(r.context().model());
        });
    }

    /** {@code java -jar worker.jar demo args...} with {@code tmp} as its temporary directory. */
    private static List<String> demo(Path tmp, String... args) {
        List<String> command = new ArrayList<>(List.of(javaBin()));
        command.addAll(JarProcesses.jarJvmOptions());
        command.addAll(List.of("-Djava.io.tmpdir=" + tmp, "-jar", JAR.toString(), "demo"));
        command.addAll(List.of(args));
        return command;
    }

    /**
     * A demo started with {@code command}, whose worker processes start with the options of the
     * test JVMs ({@link JarProcesses#jarJvmOptions}) too. The demo starts its workers as plain
     * {@code java -cp worker.jar}, which on this machine means the C2 compiler, G1 and no
     * class-data archive: the two demos' worker JVMs spent 12.4 and 13.2 s of CPU compiling and
     * loading classes, against 7.3 and 8.0 s with the test options (two runs each), for the same work.
     * The JVM reads {@code JAVA_TOOL_OPTIONS} from the environment, which the workers inherit
     * from the demo, and says so on standard error, a line that the checks below ignore.
     */
    private static ProcessBuilder demoProcess(List<String> command) {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("JAVA_TOOL_OPTIONS", String.join(" ", JarProcesses.jarJvmOptions()));
        return builder;
    }

    /** The {@code panoptes-demo-*} folders in {@code tmp}. */
    private static List<String> leftIn(Path tmp) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = Files.list(tmp)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(DemoScratch.PREFIX)).toList();
        }
    }

    private static String promptOf(Suite suite, StoredRecord r) {
        return suite.vignettes().stream().filter(v -> v.id().equals(r.record().vignetteId())).findFirst()
                .orElseThrow().prompt();
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}

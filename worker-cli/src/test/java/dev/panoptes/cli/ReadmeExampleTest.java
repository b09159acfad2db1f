package dev.panoptes.cli;

import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.demo.StubModelServer;
import dev.panoptes.testing.JarProcesses;
import dev.panoptes.worker.WorkerLoop;
import dev.panoptes.worker.WorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's embedding example, as printed: the test takes the Java block under "Embedding the
 * coordinator library" from README.md, compiles it with the system Java compiler, and runs it in
 * its own JVM on the repository's sample suite, with port 0, while an in-process worker answers
 * its jobs as the stub model would. The run must store every vignette in SQLite.
 *
 * <p>The example's class path is an embedder's: this module's test class path without this
 * module's own classes. worker-cli does not declare the SQLite driver itself, so the driver that
 * opens the example's database can only have come with the library (control-core, at runtime
 * scope): were it test-scoped again, {@code openSqlite} would fail with "No suitable driver".
 */
class ReadmeExampleTest {
    private static final Path REPOSITORY = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern JAVA_BLOCK = Pattern.compile(
            "## Embedding the coordinator library.*?```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS_NAME = Pattern.compile("public (?:final )?class (\\w+)");
    private static final Pattern WAITING = Pattern.compile("waiting for workers on port (\\d+)");
    private static final String TOKEN = "readme-token";

    @TempDir
    Path dir;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<WorkerLoop> workers = new ArrayList<>();
    private Process example;

    @AfterEach
    void stop() {
        workers.forEach(WorkerLoop::close);
        threads.shutdownNow();
        if (example != null) {
            example.destroyForcibly();
        }
    }

    @Test
    void theEmbeddingExampleCompilesAsPrintedAndRunsASuiteWithTheDriverTheLibraryBrings() throws Exception {
        String source = javaBlock(Files.readString(REPOSITORY.resolve("README.md"), StandardCharsets.UTF_8));
        Matcher name = CLASS_NAME.matcher(source);
        assertThat(name.find()).as("the README's example declares a public class:%n%s", source).isTrue();
        Path sources = Files.createDirectories(dir.resolve("src"));
        Path classes = Files.createDirectories(dir.resolve("classes"));
        Path file = Files.writeString(sources.resolve(name.group(1) + ".java"), source, StandardCharsets.UTF_8);
        String classPath = String.join(File.pathSeparator, embedderClassPath());

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int compiled = javac.run(null, diagnostics, diagnostics, "-d", classes.toString(), "-cp", classPath,
                "-Xlint:all", "-Werror", file.toString());
        assertThat(compiled).as("javac on the README's example:%n%s%n%s", diagnostics, source).isZero();

        Path suite = REPOSITORY.resolve("evals").resolve("math.jsonl");
        Path db = dir.resolve("results.db");
        Path output = dir.resolve("example.log");
        // With the test JVMs' options (C1 alone, the serial collector): what the example does is
        // the same, and its JVM spends less of the two cores the suite shares.
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()));
        command.addAll(JarProcesses.JVM_OPTIONS);
        command.addAll(List.of("-cp", classes + File.pathSeparator + classPath, name.group(1), suite.toString(), "0",
                db.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put(WorkerMain.TOKEN_ENV, TOKEN);
        example = builder.start();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> WAITING.matcher(read(output)).find() || !example.isAlive());
        Matcher waiting = WAITING.matcher(read(output));
        assertThat(waiting.find()).as("the example says where it waits; its output:%n%s", read(output)).isTrue();

        startWorker(Integer.parseInt(waiting.group(1)));

        assertThat(example.waitFor(60, TimeUnit.SECONDS)).as("the example ends; its output:%n%s", read(output)).isTrue();
        assertThat(example.exitValue()).as("exit code; output:%n%s", read(output)).isZero();
        assertThat(read(output)).contains("5 of 5 jobs stored in " + db);
        try (ResultStore store = JdbcResultStore.openSqlite(db)) {
            assertThat(store.recordCount()).isEqualTo(Files.readAllLines(suite).size());
        }
    }

    /** The Java block under the embedding heading, checked for what a reader needs to copy it. */
    private static String javaBlock(String readme) {
        Matcher m = JAVA_BLOCK.matcher(readme);
        assertThat(m.find()).as("README.md has a ```java block under 'Embedding the coordinator library'").isTrue();
        return m.group(1);
    }

    /**
     * This module's test class path (surefire's, which it gives whole even when the JVM's own is
     * a manifest-only jar) without this module's classes: what an embedder of the libraries has.
     */
    private static List<String> embedderClassPath() {
        String all = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path own = Path.of("target").toAbsolutePath();
        List<String> entries = Arrays.stream(all.split(File.pathSeparator))
                .filter(e -> !e.isBlank() && !Path.of(e).toAbsolutePath().startsWith(own))
                .toList();
        assertThat(entries).as("the embedder's class path").anyMatch(e -> e.contains("control-remote"))
                .anyMatch(e -> e.contains("sqlite-jdbc"));
        return entries;
    }

    /** A worker in this JVM that serves the example's model and answers as the stub model does. */
    private void startWorker(int port) {
        JobRunner stubModel = job -> {
            List<ResponseRecord> records = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                records.add(new ResponseRecord(v.id(), StubModelServer.answer(v.prompt())));
            }
            return new JobOutcome(job.id(), records);
        };
        WorkerOptions options = WorkerOptions.defaults().withToken(TOKEN).withModels(List.of(DemoCommand.MODEL))
                .withHeartbeat(Duration.ofMillis(200))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        WorkerLoop loop = new WorkerLoop(new InetSocketAddress("127.0.0.1", port), "readme-worker", 2, stubModel,
                options);
        workers.add(loop);
        Future<?> unused = threads.submit(() -> {
            loop.runForever();
            return null;
        });
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}

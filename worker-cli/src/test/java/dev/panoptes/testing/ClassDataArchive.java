package dev.panoptes.testing;

import dev.panoptes.demo.StubModelServer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An AppCDS archive of {@code worker.jar} for the JVMs the integration tests start, made once per
 * build of the jar by one training run ({@code eval} of a small suite against the stub model). The
 * integration tests start some fifty JVMs on two cores, and each one's start-up is mostly loading
 * and verifying the same classes: with the archive a one-vignette {@code eval} took 1.2 s of CPU
 * instead of 1.6 (medians of 4, C1 and the serial collector as here), and three of the
 * integration test classes 44 s instead of 50-54 (training included).
 *
 * <p>The archive only changes where the JVM finds its classes, never what the program does. A
 * JVM given a missing or stale archive runs without it, silently (HotSpot 17's default
 * {@code -Xshare:auto}); so when the training run fails, the tests run as before and say why on
 * standard error. The file is named for the jar's size and modification time, so a rebuilt jar
 * gets a new archive, and a file lock keeps two test JVMs (surefire runs two) from training at once.
 * {@code -Dpanoptes.test.classDataArchive=false} (in {@code argLine}) runs without it, to compare.
 */
final class ClassDataArchive {
    private static final Path DIR = Path.of("target", "cds");
    private static final Duration TRAINING_PATIENCE = Duration.ofSeconds(60);
    /** Guards {@link #made}; the file lock guards the archive between processes. */
    private static final Object LOCK = new Object();
    private static List<String> made;

    private ClassDataArchive() {
    }

    /**
     * The JVM options that use the archive of {@code jar}, making it first if this build of the
     * jar has none yet; empty when there is no jar or the archive cannot be made.
     */
    static List<String> options(Path jar) {
        synchronized (LOCK) {
            if (made == null) {
                made = make(jar);
            }
            return made;
        }
    }

    private static List<String> make(Path jar) {
        if (!Files.isRegularFile(jar) || "false".equals(System.getProperty("panoptes.test.classDataArchive"))) {
            return List.of();
        }
        try {
            Files.createDirectories(DIR);
            Path archive = DIR.resolve("worker-" + Files.size(jar) + "-" + Files.getLastModifiedTime(jar).toMillis()
                    + ".jsa").toAbsolutePath();
            try (FileChannel lockFile = FileChannel.open(DIR.resolve("lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE)) {
                FileLock held = lockFile.lock();
                try {
                    if (!Files.isRegularFile(archive)) {
                        train(jar, archive);
                        dropOthers(archive);
                    }
                } finally {
                    held.release();
                }
            }
            return List.of("-XX:SharedArchiveFile=" + archive);
        } catch (IOException | RuntimeException e) {
            System.err.println("ClassDataArchive: no class-data archive for " + jar + " (" + e.getMessage()
                    + "); the test JVMs start without one");
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** Deletes the archives of earlier builds of the jar (17 MB each), which no JVM will use again. */
    private static void dropOthers(Path archive) throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            files.filter(f -> f.getFileName().toString().endsWith(".jsa"))
                    .filter(f -> !f.getFileName().equals(archive.getFileName()))
                    .forEach(f -> f.toFile().delete());
        }
    }

    /** One {@code eval} of a small suite against the stub model, archiving the classes it loaded. */
    private static void train(Path jar, Path archive) throws IOException, InterruptedException {
        Path work = Files.createTempDirectory(DIR, "training-");
        Path suite = work.resolve("suite.jsonl");
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            lines.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"What is ").append(i).append(" + 1?\",")
                    .append("\"expected\":\"").append(i + 1).append("\"}\n");
        }
        Files.writeString(suite, lines, StandardCharsets.UTF_8);
        Path partial = work.resolve("archive.jsa");
        Path log = DIR.resolve("training.log");
        try (StubModelServer model = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ZERO, 4)) {
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:ArchiveClassesAtExit=" + partial.toAbsolutePath()));
            command.addAll(JarProcesses.JVM_OPTIONS);
            command.addAll(List.of("-jar", jar.toString(), "eval", "--suite", suite.toString(),
                    "--model-api", model.baseUrl().toString(), "--model", "stub-arithmetic",
                    "--db", work.resolve("training.db").toString(), "--no-progress"));
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().remove("OPENAI_API_KEY");
            Process p = builder.start();
            if (!p.waitFor(TRAINING_PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("the training run took over " + TRAINING_PATIENCE.toSeconds() + " s; see " + log);
            }
            if (p.exitValue() != 0 || !Files.isRegularFile(partial)) {
                throw new IOException("the training run exited " + p.exitValue() + " without an archive; see " + log);
            }
        }
        Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE);
        try (Stream<Path> left = Files.walk(work)) {
            left.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}

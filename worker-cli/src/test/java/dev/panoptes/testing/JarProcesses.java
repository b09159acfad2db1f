package dev.panoptes.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The built {@code worker.jar} run as real processes for one integration test: each process's
 * output goes to its own file under {@code target/it-logs}, named for the test, so that a failed
 * assertion can show it and a person can read it afterwards. {@link #close()} kills what is left
 * and closes what the test handed to {@link #closeLater}.
 *
 * <p>The environment variables that would change the jar's behaviour
 * ({@code OPENAI_API_KEY}, {@code PANOPTES_TOKEN}) are removed unless a test sets them.
 */
public final class JarProcesses implements AutoCloseable {
    public static final Path JAR = Path.of(System.getProperty("worker.jar", "target/worker.jar"));
    private static final Path LOGS = Path.of("target", "it-logs");
    /**
     * For the short-lived JVMs of a test: the C1 compiler alone and the serial collector start
     * faster and spend less CPU on a 2-core machine that runs several of them at once, and the JIT
     * compiles a method only after ten times the usual calls and loops (a third of a coordinator's
     * start-up CPU was C1 compiling code that runs a few hundred times in its life: a coordinator
     * and two workers of a 100-vignette run took 3.1 s of CPU instead of 3.6, runs as long); what
     * the program does is the same.
     */
    public static final List<String> JVM_OPTIONS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-XX:CompileThresholdScaling=10");
    private static final Pattern LISTENING = Pattern.compile("listening for workers on (127\\.0\\.0\\.1:\\d+);");

    private final String name;
    private final Duration patience;
    private final List<Process> processes = new ArrayList<>();
    private final Map<Process, Path> logFiles = new ConcurrentHashMap<>();
    private final List<AutoCloseable> resources = new ArrayList<>();

    /**
     * @param name     names the log files, e.g. the test class and method
     * @param patience how long to wait for output or an exit before failing
     */
    public JarProcesses(String name, Duration patience) throws IOException {
        assertThat(JAR).as("the shaded jar, built by `mvn package`").isRegularFile();
        Files.createDirectories(LOGS);
        this.name = name;
        this.patience = patience;
    }

    /**
     * {@link #JVM_OPTIONS} and, for {@code java -jar worker.jar}, the jar's class-data archive
     * ({@link ClassDataArchive}: made on the first call of a build, when it can be).
     */
    public static List<String> jarJvmOptions() {
        List<String> all = new ArrayList<>(JVM_OPTIONS);
        all.addAll(ClassDataArchive.options(JAR));
        return all;
    }

    /** Starts {@code java -jar worker.jar args...}. */
    public Process start(String... args) throws IOException {
        return start(Map.of(), args);
    }

    /** Starts {@code java -jar worker.jar args...} with these environment variables set. */
    public Process start(Map<String, String> env, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jarJvmOptions());
        command.addAll(List.of("-jar", JAR.toString()));
        command.addAll(List.of(args));
        Path logFile = LOGS.resolve(name + "-" + processes.size() + ".log");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(logFile.toFile());
        builder.environment().remove("OPENAI_API_KEY");
        builder.environment().remove("PANOPTES_TOKEN");
        builder.environment().putAll(env);
        Process p = builder.start();
        processes.add(p);
        logFiles.put(p, logFile);
        return p;
    }

    /** Everything the process printed so far, standard output and error together. */
    public String log(Process p) throws IOException {
        return Files.readString(logFiles.get(p), StandardCharsets.UTF_8);
    }

    /** Waits until the process prints {@code text} (failing if it exits first). */
    public void awaitOutput(Process p, String text) {
        await().atMost(patience).until(() -> log(p).contains(text) || !p.isAlive());
        try {
            assertThat(log(p)).as("output of a process that should print '%s'", text).contains(text);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Waits for a coordinator to say where it listens, and returns that {@code host:port}. */
    public String awaitListening(Process coordinator) throws IOException {
        await().atMost(patience).until(() -> LISTENING.matcher(log(coordinator)).find() || !coordinator.isAlive());
        Matcher m = LISTENING.matcher(log(coordinator));
        assertThat(m.find()).as("the coordinator listens; its output:%n%s", log(coordinator)).isTrue();
        return m.group(1);
    }

    /** Waits for the process to exit and checks its code, showing its output when it is wrong. */
    public void assertExitCode(Process p, int expected) throws Exception {
        boolean exited = p.waitFor(patience.toSeconds(), TimeUnit.SECONDS);
        assertThat(exited).as("exited within %s s; its output:%n%s", patience.toSeconds(), log(p)).isTrue();
        assertThat(p.exitValue()).as("exit code; output:%n%s", log(p)).isEqualTo(expected);
    }

    /** How many times {@code needle} occurs in {@code text}, overlapping or not. */
    public static int occurrences(String text, String needle) {
        int n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }

    /** Closes {@code resource} (a fake coordinator, a stub model API) after the processes, in {@link #close()}. */
    public <T extends AutoCloseable> T closeLater(T resource) {
        resources.add(resource);
        return resource;
    }

    /** Kills every process still running, then closes the resources given to {@link #closeLater}. */
    @Override
    public void close() throws IOException {
        processes.forEach(Process::destroyForcibly);
        IOException first = null;
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                if (first == null) {
                    first = new IOException("closing " + r + " failed", e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}

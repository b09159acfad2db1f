package dev.panoptes.cli;

import dev.panoptes.control.Job;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.remote.WorkerServer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing in the product runs on {@link java.util.concurrent.ForkJoinPool#commonPool()}: on a
 * machine with one or two CPUs its parallelism is 1, and {@code CompletableFuture} then starts a
 * new thread for every asynchronous task. The test reads the compiled classes of every product
 * module (with {@code javap}) and refuses every call that would land there: an {@code ...Async}
 * method of {@code CompletableFuture} or {@code CompletionStage} without an {@code Executor},
 * the common pool itself, the delayed executor without one, and parallel streams.
 */
class NoCommonPoolTest {
    /** A method reference in javap's disassembly: owner, name and descriptor. */
    private static final Pattern CALL = Pattern.compile(
            "// (?:Interface)?Method ([\\w/$]+)\\.(\\w+):\\(([^)]*)\\)");

    @Test
    void noProductClassCallsAnythingThatRunsOnTheCommonPool() throws Exception {
        // Each module's classes: a folder under target/ in a module build, its jar in a reactor's verify.
        List<String[]> classes = new ArrayList<>();
        for (Class<?> moduleClass : List.of(Job.class, EvalJobRunner.class, WorkerServer.class, WorkerMain.class)) {
            Path root = Path.of(moduleClass.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (String name : classNames(root)) {
                classes.add(new String[] {root.toString(), name});
            }
        }
        assertThat(classes).hasSizeGreaterThan(100);

        List<String> offences = new ArrayList<>();
        int futureCalls = 0;
        for (int from = 0; from < classes.size(); from += 100) {
            String disassembly = javap(classes.subList(from, Math.min(classes.size(), from + 100)));
            String currentClass = "?";
            for (String line : disassembly.split("\n")) {
                if (line.startsWith("Compiled from") || line.matches("^(public |final |abstract |)*(class|interface|enum|record) .*")) {
                    currentClass = line;
                }
                Matcher m = CALL.matcher(line);
                while (m.find()) {
                    if (m.group(1).equals("java/util/concurrent/CompletableFuture")) {
                        futureCalls++;
                    }
                    String offence = offence(m.group(1), m.group(2), m.group(3));
                    if (offence != null) {
                        offences.add(offence + " in " + currentClass.trim());
                    }
                }
            }
        }
        // The disassembly was read: the product calls CompletableFuture in many places.
        assertThat(futureCalls).isGreaterThan(10);
        assertThat(offences).as("calls that would run on ForkJoinPool.commonPool()").isEmpty();
    }

    @Test
    void theCheckCatchesACallWithoutAnExecutor() {
        assertThat(offence("java/util/concurrent/CompletableFuture", "thenApplyAsync", "Ljava/util/function/Function;"))
                .isNotNull();
        assertThat(offence("java/util/concurrent/CompletableFuture", "thenApplyAsync",
                "Ljava/util/function/Function;Ljava/util/concurrent/Executor;")).isNull();
        assertThat(offence("java/util/concurrent/CompletableFuture", "supplyAsync", "Ljava/util/function/Supplier;"))
                .isNotNull();
        assertThat(offence("java/util/concurrent/ForkJoinPool", "commonPool", "")).isNotNull();
        assertThat(offence("java/util/Collection", "parallelStream", "")).isNotNull();
        assertThat(offence("java/util/concurrent/CompletableFuture", "thenApply", "Ljava/util/function/Function;"))
                .isNull();
    }

    /** Why this call lands on the common pool, or null when it does not. */
    static String offence(String owner, String name, String parameters) {
        boolean future = owner.equals("java/util/concurrent/CompletableFuture")
                || owner.equals("java/util/concurrent/CompletionStage");
        boolean takesExecutor = parameters.contains("Ljava/util/concurrent/Executor;");
        if (future && name.endsWith("Async") && !takesExecutor) {
            return owner + "." + name + " without an Executor";
        }
        if (future && name.equals("delayedExecutor") && !takesExecutor) {
            return owner + ".delayedExecutor without an Executor";
        }
        if (owner.equals("java/util/concurrent/ForkJoinPool") && name.equals("commonPool")) {
            return "ForkJoinPool.commonPool()";
        }
        if (name.equals("parallelStream") || (name.equals("parallel") && owner.startsWith("java/util/stream/"))) {
            return "a parallel stream (" + owner + "." + name + ")";
        }
        return null;
    }

    /** The binary names of the classes under a folder or in a jar. */
    private static List<String> classNames(Path root) throws IOException {
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(root)) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(f -> f.toString().endsWith(".class"))
                        .forEach(f -> names.add(binaryName(root.relativize(f).toString())));
            }
        } else {
            try (JarFile jar = new JarFile(root.toFile())) {
                jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class") && !n.startsWith("META-INF"))
                        .forEach(n -> names.add(binaryName(n)));
            }
        }
        return names;
    }

    private static String binaryName(String path) {
        return path.substring(0, path.length() - ".class".length()).replace('/', '.').replace('\\', '.');
    }

    /** Disassembles classes given as {classpath root, binary name}; one javap run per root. */
    private static String javap(List<String[]> classes) throws IOException {
        ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow(() ->
                new IllegalStateException("javap is not available in this JDK"));
        StringWriter out = new StringWriter();
        java.util.Map<String, List<String>> byRoot = new java.util.LinkedHashMap<>();
        for (String[] c : classes) {
            byRoot.computeIfAbsent(c[0], k -> new ArrayList<>()).add(c[1]);
        }
        for (java.util.Map.Entry<String, List<String>> e : byRoot.entrySet()) {
            List<String> args = new ArrayList<>(List.of("-c", "-p", "-cp", e.getKey()));
            args.addAll(e.getValue());
            int exit = javap.run(new PrintWriter(out), new PrintWriter(out), args.toArray(String[]::new));
            if (exit != 0) {
                throw new IOException("javap exited " + exit + ": " + out);
            }
        }
        return out.toString();
    }
}

package dev.panoptes.bench.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The parent's handle on one child JVM: {@code java -cp <this jar> <main> args}, with its stdout
 * read line by line on a daemon thread (the {@link Kv} replies), its stdin for commands, and its
 * stderr (logs) in a file of the run's log directory.
 *
 * <p>A child ends by itself when its stdin closes (see {@link ChildIo}), so a parent that dies
 * leaves nothing running; {@link #close()} also kills it. The parent thread that drives a child
 * is the only one to call {@link #send} and {@link #expect}.
 */
public final class Child implements AutoCloseable {
    private static final String EOF = "\u0000EOF";

    private final String name;
    private final Process process;
    private final Path log;
    private final PrintWriter stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final boolean echo;

    private Child(String name, Process process, Path log, boolean echo) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.echo = echo;
        this.stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        Thread reader = new Thread(this::readStdout, "child-stdout-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code mainClass} of this jar in a new JVM.
     *
     * @param jvmArgs options before the class name (heap, JFR, ...)
     * @param args    the main's arguments
     */
    public static Child start(BenchContext ctx, String name, Class<?> mainClass, List<String> jvmArgs, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(ctx.childJvmArgs());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        return startCommand(ctx, name, command);
    }

    /**
     * Starts any command (the product's own jar, say) as a child with the same plumbing. A
     * command run under coreutils {@code timeout} is handled as the JVM it starts: {@link #pid()},
     * CPU, signals and kills go to that JVM.
     */
    public static Child startCommand(BenchContext ctx, String name, List<String> command) {
        Path log = ctx.logDir().resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        try {
            Files.writeString(log, "# " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
            Child child = new Child(name, pb.start(), log, ctx.verbose());
            ctx.track(child);
            return child;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start child " + name + ": " + command, e);
        }
    }

    public static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    public String name() {
        return name;
    }

    /** The JVM's pid: the process itself, or the one {@code timeout} started. */
    public long pid() {
        return target().pid();
    }

    /** The process that does the work: for a command under {@code timeout}, its child. */
    private ProcessHandle target() {
        ProcessHandle self = process.toHandle();
        if (!process.info().command().map(c -> c.endsWith("/timeout")).orElse(false)) {
            return self;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - deadline < 0) {
            java.util.Optional<ProcessHandle> child = self.children().findFirst();
            if (child.isPresent()) {
                return child.get();
            }
            if (!process.isAlive()) {
                break;
            }
            Thread.onSpinWait();
        }
        return self;
    }

    public Process process() {
        return process;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** CPU the child has used so far, from /proc. */
    public long cpuNanos() {
        return Machine.processCpuNanos(pid());
    }

    /** Sends one command line. */
    public void send(String line) {
        stdin.println(line);
        if (stdin.checkError()) {
            throw new IllegalStateException("child " + name + " no longer reads its stdin (exit code "
                    + exitCodeOrNone() + "); see " + log);
        }
    }

    /**
     * Waits for the next line tagged {@code tag}, skipping others.
     *
     * @throws IllegalStateException when the child ends or the timeout passes first; the message
     *                               carries the end of the child's log
     */
    public Kv expect(String tag, Duration timeout) {
        return Kv.parse(awaitLine(line -> line.startsWith(tag + " ") || line.equals(tag), tag, timeout));
    }

    /** Waits for the next line containing {@code text}, for children that are not ours (the product's CLI). */
    public String expectContaining(String text, Duration timeout) {
        return awaitLine(line -> line.contains(text), "'" + text + "'", timeout);
    }

    /** The next line that matches, skipping others; fails with the end of the child's log. */
    private String awaitLine(Predicate<String> matches, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line;
            try {
                line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what + " from " + name, e);
            }
            if (line == null) {
                throw new IllegalStateException("no " + what + " from child " + name + " within " + timeout.toMillis()
                        + " ms (alive: " + process.isAlive() + ")" + tail());
            }
            if (line.equals(EOF)) {
                lines.add(EOF);
                throw new IllegalStateException("child " + name + " ended (exit code " + exitCodeOrNone()
                        + ") before sending " + what + tail());
            }
            if (matches.test(line)) {
                return line;
            }
        }
    }

    /** Every stdout line received and not yet consumed; for the product CLI's summary. */
    public List<String> drainLines() {
        List<String> out = new ArrayList<>();
        lines.drainTo(out);
        out.remove(EOF);
        return out;
    }

    /** Waits for the child to exit. @return its exit code, or -1 on timeout */
    public int waitFor(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** SIGKILL. @return the {@link System#nanoTime()} just before the signal was sent */
    public long kill9() {
        ProcessHandle target = target();
        long t = System.nanoTime();
        target.destroyForcibly();
        process.destroyForcibly();
        return t;
    }

    /**
     * Sends a signal by name with {@code kill}, for those Java has no call for (STOP, CONT).
     *
     * @return the {@link System#nanoTime()} once {@code kill} returned, when the signal has been sent
     */
    public long signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
            return System.nanoTime();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending " + signal + " to " + name, e);
        }
    }

    /** Closes stdin (the child's cue to exit), waits briefly, then kills it. Idempotent. */
    @Override
    public void close() {
        ProcessHandle target = process.isAlive() ? target() : process.toHandle();
        stdin.close();
        try {
            if (!process.waitFor(3, TimeUnit.SECONDS)) {
                // SIGTERM to the JVM itself (a worker then drains and exits 0), and to its wrapper.
                target.destroy();
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    target.destroyForcibly();
                    process.destroyForcibly();
                    process.waitFor(2, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private String exitCodeOrNone() {
        return process.isAlive() ? "none yet" : Integer.toString(process.exitValue());
    }

    private String tail() {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            List<String> last = all.subList(Math.max(0, all.size() - 15), all.size());
            return "; last lines of " + log + ":\n    " + String.join("\n    ", last);
        } catch (IOException | RuntimeException e) {
            return "; see " + log;
        }
    }

    private void readStdout() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (echo) {
                    System.err.println("[" + name + "] " + line);
                }
                lines.add(line);
            }
        } catch (IOException e) {
            // The child went away; the EOF marker below tells whoever waits.
        } finally {
            lines.add(EOF);
        }
    }

    @Override
    public String toString() {
        return "Child[" + name + ", pid " + process.pid() + "]";
    }
}

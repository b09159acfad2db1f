package dev.panoptes.bench.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the JDK's {@code jcmd} against a child JVM: flight recordings for profiles, heap info. */
public final class Jcmd {
    private Jcmd() {
    }

    /** Runs {@code jcmd pid args...} and returns its output. */
    public static String run(long pid, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
        command.add(Long.toString(pid));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("jcmd " + String.join(" ", args) + " did not finish in 60 s");
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("jcmd " + String.join(" ", args) + " failed: " + text);
            }
            return text;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run jcmd", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running jcmd", e);
        }
    }

    /** Starts a flight recording with the "profile" settings (10 ms Java samples). */
    public static void startRecording(long pid) {
        run(pid, "JFR.start", "name=bench", "settings=profile");
    }

    /** Stops the recording and writes it to {@code file}. */
    public static void stopRecording(long pid, Path file) {
        run(pid, "JFR.stop", "name=bench", "filename=" + file.toAbsolutePath());
    }
}

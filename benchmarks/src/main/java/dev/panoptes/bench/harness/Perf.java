package dev.panoptes.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Linux {@code perf}, when installed and permitted, for what JFR cannot see: how many syscalls
 * and context switches a process makes per job ({@code perf stat}), and which syscalls
 * ({@code perf trace -s}). Everything here is optional: without perf the profile says so and
 * goes on.
 */
public final class Perf {
    private Perf() {
    }

    /** A {@code perf} run in the background, attached to one process for a fixed time. */
    public static final class Session {
        private final Process process;
        private final String what;

        private Session(Process process, String what) {
            this.process = process;
            this.what = what;
        }

        /** Waits for perf to finish and returns what it printed (perf prints its report on stderr). */
        public String output() {
            try {
                byte[] out = process.getInputStream().readAllBytes();
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
                return new String(out, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "perf " + what + " failed: " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
    }

    /** True when {@code perf stat} can count syscalls here. */
    public static boolean available() {
        try {
            Process p = new ProcessBuilder("perf", "stat", "-e", "raw_syscalls:sys_enter", "--", "true")
                    .redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Starts counting syscalls and context switches of {@code pid} for {@code seconds}. */
    public static Session stat(long pid, double seconds) throws IOException {
        return new Session(new ProcessBuilder("perf", "stat", "-x", ",", "-e",
                "raw_syscalls:sys_enter,context-switches", "-p", Long.toString(pid), "--", "sleep",
                Double.toString(seconds)).redirectErrorStream(true).start(), "stat");
    }

    /** Starts a syscall summary of {@code pid} for {@code seconds}. */
    public static Session trace(long pid, double seconds) throws IOException {
        return new Session(new ProcessBuilder("perf", "trace", "-s", "-p", Long.toString(pid), "--", "sleep",
                Double.toString(seconds)).redirectErrorStream(true).start(), "trace");
    }

    /** Parses {@code perf stat -x ,} output: event name to count. */
    public static Map<String, Long> counts(String statOutput) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String line : statOutput.split("\n")) {
            String[] f = line.split(",");
            if (f.length >= 3) {
                try {
                    counts.put(f[2].trim(), Long.parseLong(f[0].trim()));
                } catch (NumberFormatException e) {
                    // "<not counted>" and header lines
                }
            }
        }
        return counts;
    }

    /**
     * Parses {@code perf trace -s}: calls per syscall name, summed over the threads it lists.
     */
    public static Map<String, Long> syscalls(String traceOutput) {
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : traceOutput.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 3 && f[0].matches("[a-z_0-9]+") && f[1].matches("\\d+") && f[2].matches("\\d+")) {
                calls.merge(f[0], Long.parseLong(f[1]), Long::sum);
            }
        }
        List<Map.Entry<String, Long>> sorted = new ArrayList<>(calls.entrySet());
        sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        Map<String, Long> out = new LinkedHashMap<>();
        sorted.forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    /** Starts sampling {@code pid}'s CPU (user and kernel, every thread) for {@code seconds} into {@code file}. */
    public static Session record(long pid, double seconds, java.nio.file.Path file) throws IOException {
        return new Session(new ProcessBuilder("perf", "record", "-F", "999", "-p", Long.toString(pid), "-o",
                file.toString(), "--", "sleep", Double.toString(seconds)).redirectErrorStream(true).start(),
                "record");
    }

    /**
     * The hottest symbols of a recording by self samples, as (share, symbol) rows. JIT-compiled
     * Java methods are named through the JVM's perf map (written by {@code jcmd Compiler.perfmap}
     * before calling this); kernel symbols name the syscall paths.
     */
    public static List<List<String>> report(java.nio.file.Path file, int top) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("perf", "report", "-i", file.toString(), "--stdio", "--no-children",
                "--sort", "dso,sym", "--percent-limit", "0.5").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(60, TimeUnit.SECONDS);
        List<List<String>> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            String t = line.trim();
            if (t.isEmpty() || t.startsWith("#") || !t.contains("%")) {
                continue;
            }
            String[] f = t.split("\\s+", 3);
            if (f.length < 3 || !f[0].endsWith("%")) {
                continue;
            }
            rows.add(List.of(f[0], f[1], "`" + shortSymbol(f[2]) + "`"));
            if (rows.size() == top) {
                break;
            }
        }
        return rows;
    }

    private static final java.util.regex.Pattern JAVA_METHOD =
            java.util.regex.Pattern.compile("([\\w$]+)\\.([\\w$<>]+)\\(");

    /**
     * A readable symbol: without perf's thread and kind prefixes, and a Java method as
     * {@code Class.method} without its package, return type and parameters.
     */
    public static String shortSymbol(String raw) {
        String s = raw.replaceFirst("^tid \\d+\\s+", "").replaceFirst("^\\[[.k]\\]\\s+", "").trim();
        java.util.regex.Matcher m = JAVA_METHOD.matcher(s);
        String method = null;
        while (m.find()) {
            method = m.group(1) + "." + m.group(2);
        }
        return (method != null ? method : s).replace("|", "/");
    }
}

package dev.panoptes.bench.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a benchmark says about the machine it ran on, and the CPU accounting it needs: the load
 * average (so a noisy run is flagged), process CPU from {@code /proc/<pid>/stat}, and the CPU of
 * each thread of the current JVM.
 */
public final class Machine {
    /** Clock ticks per second of /proc's utime and stime; 100 on every Linux we run on. */
    private static final long CLOCK_TICKS_PER_SECOND = 100;
    /** A one-minute load above this (on top of our own work) marks the machine as busy. */
    public static final double QUIET_LOAD = 0.5;

    private Machine() {
    }

    public static int cores() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** The one-minute load average, or -1 where /proc/loadavg does not exist. */
    public static double loadAverage() {
        try {
            String s = Files.readString(Path.of("/proc/loadavg")).trim();
            return Double.parseDouble(s.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** One line naming the machine: cores, JVM, OS, and the load now. */
    public static String describe() {
        return String.format(Locale.ROOT, "%d cores, %s %s (%s), %s %s, load %.2f", cores(),
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
                System.getProperty("java.vendor"), System.getProperty("os.name"), System.getProperty("os.version"),
                loadAverage());
    }

    /**
     * The commit of the working tree the benchmark runs in (the current directory), with the
     * number of files changed since, or "unknown" outside a git checkout.
     */
    public static String sourceVersion() {
        try {
            Process head = new ProcessBuilder("git", "rev-parse", "--short", "HEAD").redirectErrorStream(true).start();
            String commit = new String(head.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                    .trim();
            Process status = new ProcessBuilder("git", "status", "--porcelain", "--untracked-files=no")
                    .redirectErrorStream(true).start();
            long dirty = new String(status.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                    .lines().count();
            if (head.waitFor() != 0 || status.waitFor() != 0) {
                return "unknown";
            }
            return dirty == 0 ? commit : commit + " + " + dirty + " uncommitted files";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** Prints the machine line, and a warning when the machine is not quiet before a measurement. */
    public static void report(PrintStream out) {
        out.println("# machine: " + describe());
        out.println("# source: " + sourceVersion() + " (the product classes are those this jar was built with)");
        double load = loadAverage();
        if (load > QUIET_LOAD) {
            out.println("# WARNING: load average " + load + " before starting: something else is running;"
                    + " figures may be low and noisy. Re-run on a quiet machine.");
        }
    }

    /**
     * CPU time (user + system) a process has used, from /proc.
     *
     * @return nanoseconds, or -1 when the process is gone or /proc is missing
     */
    public static long processCpuNanos(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // The command name (field 2) may hold spaces: count fields after its closing paren.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14, 15)
            return ticks * (1_000_000_000L / CLOCK_TICKS_PER_SECOND);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * System (kernel) CPU time a process has used, from /proc: the time spent in syscalls and
     * the interrupts they cause.
     *
     * @return nanoseconds, or -1 when the process is gone or /proc is missing
     */
    public static long processSystemCpuNanos(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[12]) * (1_000_000_000L / CLOCK_TICKS_PER_SECOND); // stime (field 15)
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** CPU time of each live thread of this JVM, by name (threads of equal name are summed). */
    public static Map<String, Long> threadCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> byName = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long cpu = threads.getThreadCpuTime(id);
            var info = threads.getThreadInfo(id);
            if (cpu < 0 || info == null) {
                continue;
            }
            byName.merge(info.getThreadName(), cpu, Long::sum);
        }
        return byName;
    }

    /**
     * The busiest threads between two {@link #threadCpuNanos()} snapshots, as
     * {@code name:percent-of-one-core} joined by commas (no spaces, so that it fits a {@link Kv}).
     */
    public static String busiestThreads(Map<String, Long> before, Map<String, Long> after, long wallNanos, int top) {
        List<Map.Entry<String, Long>> deltas = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (d > 0) {
                deltas.add(Map.entry(e.getKey(), d));
            }
        }
        deltas.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()));
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(top, deltas.size()); i++) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(deltas.get(i).getKey().replace(' ', '_').replace(',', '_')).append(':')
                    .append(String.format(Locale.ROOT, "%.0f%%", 100.0 * deltas.get(i).getValue() / wallNanos));
        }
        return sb.length() == 0 ? "-" : sb.toString();
    }

    /** CPU time of this JVM so far, in nanoseconds. */
    public static long ownCpuNanos() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return processCpuNanos(ProcessHandle.current().pid());
    }

    /** The soft limit of open files of this process (inherited by its children), or -1 when unknown. */
    public static long openFileLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return "unlimited".equals(soft) ? Long.MAX_VALUE : Long.parseLong(soft);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}

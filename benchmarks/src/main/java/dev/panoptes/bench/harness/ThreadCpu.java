package dev.panoptes.bench.harness;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where another JVM's CPU goes, by thread, read from {@code /proc/<pid>/task/*}: a {@link Sample}
 * is each thread's user + system CPU and context switches at one moment, and
 * {@link #between(List)} is the window over a run of samples, grouped as the coordinator's
 * threads are named: {@code result-store}, {@code panoptes-remote-*} (the I/O loops),
 * {@code main}, the JIT compilers, GC (the collector's threads and the VM thread), and the rest.
 * A thread that ended inside the window counts in its group up to the last sample that saw it
 * (the store's thread ends once a run's last answers are written, often before the poll that
 * sees them); what it spent after that sample counts in "other", through the process's own total.
 *
 * <p>Stateless; samples are immutable.
 */
public final class ThreadCpu {
    /** The groups, in report order. */
    public static final List<String> GROUPS = List.of("result-store", "panoptes-remote (I/O)", "main",
            "JIT compilers", "GC", "other");

    private static final long NANOS_PER_TICK = 1_000_000_000L / 100; // USER_HZ, 100 on Linux

    /**
     * One thread at one moment.
     *
     * @param cpuNanos  its CPU time to the nanosecond ({@code schedstat}'s time on a CPU), or its
     *                  user + system ticks where the kernel keeps no schedstat
     * @param tickNanos its user + system ticks ({@code stat}), the unit of the process's own total
     */
    public record Task(String name, long cpuNanos, long tickNanos, long voluntary, long involuntary) {
    }

    /**
     * A process at one moment.
     *
     * @param nanos           when, on {@link System#nanoTime()}
     * @param processCpuNanos the whole process's CPU (every thread, ended ones too)
     * @param tasks           the live threads by tid
     */
    public record Sample(long nanos, long processCpuNanos, Map<Long, Task> tasks) {
    }

    /**
     * A window: CPU per group (nanoseconds) and context switches of the threads the samples saw.
     */
    public record Window(long wallNanos, long processCpuNanos, Map<String, Long> cpuByGroup, long voluntary,
                         long involuntary) {
    }

    private ThreadCpu() {
    }

    /** Reads every thread of {@code pid} now; null when the process is gone. */
    public static Sample sample(long pid) {
        long now = System.nanoTime();
        long process = Machine.processCpuNanos(pid);
        if (process < 0) {
            return null;
        }
        Map<Long, Task> tasks = new HashMap<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : dir) {
                Task t = readTask(task);
                if (t != null) {
                    tasks.put(Long.parseLong(task.getFileName().toString()), t);
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return new Sample(now, process, tasks);
    }

    private static Task readTask(Path task) {
        try {
            String stat = Files.readString(task.resolve("stat"));
            String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
            // Ticks are 10 ms: a thread's share of a short window would round to nothing.
            long cpu = ticks;
            Path schedstat = task.resolve("schedstat");
            if (Files.exists(schedstat)) {
                String line = Files.readString(schedstat).trim();
                cpu = Long.parseLong(line.substring(0, line.indexOf(' ')));
            }
            long voluntary = 0;
            long involuntary = 0;
            for (String line : Files.readAllLines(task.resolve("status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    voluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                    involuntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
            return new Task(name, cpu, ticks, voluntary, involuntary);
        } catch (IOException | RuntimeException e) {
            return null; // the thread ended while being read
        }
    }

    /** The group of a thread, by its name as /proc shows it (the first 15 characters). */
    public static String group(String name) {
        if (name.startsWith("result-store")) {
            return "result-store";
        }
        if (name.startsWith("panoptes-remote")) {
            return "panoptes-remote (I/O)";
        }
        if (name.equals("main") || name.equals("java")) {
            return "main";
        }
        if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
            return "JIT compilers";
        }
        if (name.startsWith("GC Thread") || name.startsWith("G1 ") || name.equals("VM Thread")
                || name.startsWith("VM Periodic")) {
            return "GC";
        }
        return "other";
    }

    /** The window from {@code a} to {@code b}, as {@link #between(List)} with no sample between. */
    public static Window between(Sample a, Sample b) {
        return between(List.of(a, b));
    }

    /**
     * The window from the first of {@code samples} to the last, grouped: each thread from the
     * first sample (or its birth) to the last sample that saw it. The CPU no sample saw (threads
     * born and ended between two samples, the end of one that ended) goes to "other": the
     * process's ticks beyond its threads' ticks, both counted in the same unit.
     *
     * @param samples in time order, at least one
     */
    public static Window between(List<Sample> samples) {
        Sample a = samples.get(0);
        Sample b = samples.get(samples.size() - 1);
        Map<Long, Task> lastSeen = new HashMap<>();
        for (Sample s : samples) {
            lastSeen.putAll(s.tasks());
        }
        Map<String, Long> byGroup = new LinkedHashMap<>();
        GROUPS.forEach(g -> byGroup.put(g, 0L));
        long voluntary = 0;
        long involuntary = 0;
        long groupedTicks = 0;
        for (Map.Entry<Long, Task> e : lastSeen.entrySet()) {
            Task end = e.getValue();
            Task start = a.tasks().get(e.getKey());
            long cpu = end.cpuNanos() - (start == null ? 0 : start.cpuNanos());
            byGroup.merge(group(end.name()), cpu, Long::sum);
            groupedTicks += end.tickNanos() - (start == null ? 0 : start.tickNanos());
            voluntary += end.voluntary() - (start == null ? 0 : start.voluntary());
            involuntary += end.involuntary() - (start == null ? 0 : start.involuntary());
        }
        long process = b.processCpuNanos() - a.processCpuNanos();
        byGroup.merge("other", Math.max(0, process - groupedTicks), Long::sum);
        return new Window(b.nanos() - a.nanos(), process, byGroup, voluntary, involuntary);
    }
}

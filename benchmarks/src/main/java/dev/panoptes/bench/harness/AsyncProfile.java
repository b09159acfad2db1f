package dev.panoptes.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * A CPU or allocation profile of another JVM over a window, with async-profiler's agent (not a
 * dependency: the path of its {@code libasyncProfiler.so} is given, e.g. from Maven Central's
 * {@code tools.profiler:async-profiler} jar):
 * {@link #start} attaches and samples every thread's CPU each millisecond (or, for
 * {@code alloc}, the allocations, one sample per 512 KB allocated in TLABs), {@link #stop} writes
 * the collapsed stacks (one line per distinct stack, the thread's name first; for {@code alloc}
 * the bytes, not the samples), and {@link #report} prints, per thread group, the samples and the
 * frames that used them (self).
 *
 * <p>Called from the parent's main thread.
 */
public final class AsyncProfile {
    private AsyncProfile() {
    }

    /**
     * Starts sampling {@code pid}'s CPU per thread, loading the agent into the running JVM with
     * {@code jcmd JVMTI.agent_load} (its options quoted, or jcmd reads their '=' as its own). @throws IllegalStateException when it fails
     */
    public static void start(Path library, long pid) {
        start(library, pid, "cpu");
    }

    /**
     * Starts profiling {@code pid} per thread for {@code event}: {@code cpu} (a sample per
     * millisecond of CPU) or {@code alloc} (a sample per 512 KB allocated).
     * @throws IllegalArgumentException for another event; @throws IllegalStateException when loading fails
     */
    public static void start(Path library, long pid, String event) {
        String options = switch (event) {
            case "cpu" -> "start,event=cpu,interval=1ms,threads";
            case "alloc" -> "start,event=alloc,alloc=512k,threads";
            default -> throw new IllegalArgumentException("async-profiler event must be cpu or alloc, got " + event);
        };
        Jcmd.run(pid, "JVMTI.agent_load", library.toAbsolutePath().toString(), "\"" + options + "\"");
    }

    /** Stops and writes the collapsed stacks to {@code out}. @throws IllegalStateException when it fails */
    public static void stop(Path library, long pid, Path out) {
        stop(library, pid, out, "cpu");
    }

    /**
     * Stops and writes the collapsed stacks to {@code out}; for {@code alloc}, each stack's bytes
     * ({@code total}) rather than its samples. @throws IllegalStateException when it fails
     */
    public static void stop(Path library, long pid, Path out, String event) {
        Jcmd.run(pid, "JVMTI.agent_load", library.toAbsolutePath().toString(), "\"stop,file=" + out + ",collapsed"
                + (event.equals("alloc") ? ",total" : "") + "\"");
    }

    /**
     * Prints, for each thread group (by {@code group} of the thread's name), its samples in
     * milliseconds and its {@code top} hottest frames by self samples, and the same with the
     * nearest frame of the product ({@code dev.panoptes}) for each sample: what product code the
     * time went under.
     */
    public static void report(Report report, Path collapsed, Function<String, String> group, List<String> order,
                              int top) throws IOException {
        report(report, collapsed, group, order, top, "cpu", 0);
    }

    /**
     * As {@link #report(Report, Path, Function, List, int)}, for {@code event} ({@code cpu}: samples
     * are milliseconds; {@code alloc}: bytes); with {@code answers} over 0, each group's total is
     * also given per answer (microseconds or bytes).
     */
    public static void report(Report report, Path collapsed, Function<String, String> group, List<String> order,
                              int top, String event, long answers) throws IOException {
        Map<String, Map<String, Long>> self = new LinkedHashMap<>();
        Map<String, Map<String, Long>> product = new LinkedHashMap<>();
        Map<String, Long> totals = new HashMap<>();
        for (String line : Files.readAllLines(collapsed, StandardCharsets.UTF_8)) {
            int space = line.lastIndexOf(' ');
            if (space < 0) {
                continue;
            }
            long samples = Long.parseLong(line.substring(space + 1).trim());
            String[] frames = line.substring(0, space).split(";");
            String thread = frames[0].replaceAll("^\\[|( tid=\\d+)?\\]$", "");
            String g = group.apply(thread);
            totals.merge(g, samples, Long::sum);
            self.computeIfAbsent(g, k -> new HashMap<>()).merge(frames[frames.length - 1], samples, Long::sum);
            String owner = "(no product frame)";
            for (int i = frames.length - 1; i > 0; i--) {
                if (frames[i].startsWith("dev/panoptes/") || frames[i].startsWith("dev.panoptes.")) {
                    owner = frames[i];
                    break;
                }
            }
            product.computeIfAbsent(g, k -> new HashMap<>()).merge(owner, samples, Long::sum);
        }
        long all = totals.values().stream().mapToLong(Long::longValue).sum();
        for (String g : order) {
            Long total = totals.get(g);
            if (total == null) {
                continue;
            }
            report.line("");
            boolean alloc = event.equals("alloc");
            String perAnswer = answers <= 0 ? "" : String.format(Locale.ROOT, ", %.1f %s per answer",
                    alloc ? (double) total / answers : total * 1e3 / answers, alloc ? "bytes" : "us");
            report.line(String.format(Locale.ROOT, "**%s**: %,d %s sampled (%.0f %% of the process%s)", g, total,
                    alloc ? "bytes allocated" : "ms of CPU", 100.0 * total / all, perAnswer));
            report.line("");
            List<List<String>> rows = new ArrayList<>();
            List<Map.Entry<String, Long>> s = sorted(self.get(g), top);
            List<Map.Entry<String, Long>> p = sorted(product.get(g), top);
            for (int i = 0; i < Math.max(s.size(), p.size()); i++) {
                rows.add(List.of(i < s.size() ? cell(s.get(i), total) : "", i < p.size() ? cell(p.get(i), total) : ""));
            }
            report.table(List.of("hottest frames (self)", "nearest product frame"), rows);
        }
    }

    private static List<Map.Entry<String, Long>> sorted(Map<String, Long> counts, int top) {
        return counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .limit(top).toList();
    }

    private static String cell(Map.Entry<String, Long> e, long total) {
        String frame = e.getKey().replace('|', '/');
        if (frame.length() > 90) {
            frame = "..." + frame.substring(frame.length() - 87);
        }
        return String.format(Locale.ROOT, "%.1f %% `%s`", 100.0 * e.getValue() / total, frame);
    }
}

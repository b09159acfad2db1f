package dev.panoptes.bench.harness;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where a JVM spent its time, from a JFR recording's execution samples (threads running Java
 * code) and native-method samples (threads inside a native call: a syscall, or waiting in one):
 * the samples per thread, the hottest methods by self samples (the top frame), and by inclusive
 * samples (anywhere on the stack), each as a share of all samples.
 */
public final class JfrSummary {
    private JfrSummary() {
    }

    /** Prints the summary of a recording into the report. */
    public static void print(Report report, Path recording, String title, int top) throws IOException {
        print(report, recording, title, top, Double.MAX_VALUE);
    }

    /**
     * Prints the summary of the first {@code firstSeconds} of a recording (from its first event),
     * for a phase such as a coordinator's start-up.
     */
    public static void print(Report report, Path recording, String title, int top, double firstSeconds)
            throws IOException {
        Map<String, Integer> byThread = new HashMap<>();
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> inclusive = new HashMap<>();
        Map<String, Integer> nativeSelf = new HashMap<>();
        int samples = 0;
        int nativeSamples = 0;
        List<RecordedEvent> events = RecordingFile.readAllEvents(recording);
        java.time.Instant first = events.stream().map(RecordedEvent::getStartTime).min(java.time.Instant::compareTo)
                .orElse(java.time.Instant.EPOCH);
        java.time.Instant until = firstSeconds >= Double.MAX_VALUE / 2 ? java.time.Instant.MAX
                : first.plusNanos((long) (firstSeconds * 1e9));
        for (RecordedEvent e : events) {
            if (e.getStartTime().isAfter(until)) {
                continue;
            }
            String type = e.getEventType().getName();
            boolean java = type.equals("jdk.ExecutionSample");
            if (!java && !type.equals("jdk.NativeMethodSample")) {
                continue;
            }
            RecordedStackTrace stack = e.getStackTrace();
            if (stack == null || stack.getFrames().isEmpty()) {
                continue;
            }
            String top0 = name(stack.getFrames().get(0));
            if (!java) {
                nativeSamples++;
                nativeSelf.merge(threadGroup(e) + " " + top0, 1, Integer::sum);
                continue;
            }
            samples++;
            byThread.merge(threadGroup(e), 1, Integer::sum);
            self.merge(top0, 1, Integer::sum);
            Set<String> seen = new HashSet<>();
            for (RecordedFrame f : stack.getFrames()) {
                String n = name(f);
                if (seen.add(n)) {
                    inclusive.merge(n, 1, Integer::sum);
                }
            }
        }
        report.line("");
        report.line("#### Profile: " + title + " (" + samples + " JFR execution samples, " + nativeSamples
                + " native-method samples)");
        report.line("");
        report.line("Java samples by thread: " + topList(byThread, samples, 10));
        report.line("");
        rows(report, "self (top frame)", self, samples, top);
        rows(report, "inclusive (anywhere on the stack)", inclusive, samples, top);
        rows(report, "native-method samples (thread, top frame)", nativeSelf, nativeSamples, Math.min(top, 10));
    }

    private static void rows(Report report, String what, Map<String, Integer> counts, int total, int top) {
        List<List<String>> rows = new ArrayList<>();
        for (Map.Entry<String, Integer> e : sorted(counts)) {
            if (rows.size() == top) {
                break;
            }
            rows.add(List.of(String.format(Locale.ROOT, "%.1f%%", 100.0 * e.getValue() / Math.max(1, total)),
                    "`" + e.getKey() + "`"));
        }
        report.line("Hottest, " + what + ":");
        report.line("");
        report.table(List.of("share", "method"), rows);
        report.line("");
    }

    private static String topList(Map<String, Integer> counts, int total, int top) {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (Map.Entry<String, Integer> e : sorted(counts)) {
            if (n++ == top) {
                break;
            }
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(e.getKey()).append(String.format(Locale.ROOT, " %.0f%%", 100.0 * e.getValue() / Math.max(1, total)));
        }
        return sb.toString();
    }

    private static List<Map.Entry<String, Integer>> sorted(Map<String, Integer> counts) {
        List<Map.Entry<String, Integer>> list = new ArrayList<>(counts.entrySet());
        list.sort(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder()));
        return list;
    }

    private static String name(RecordedFrame f) {
        String type = f.getMethod().getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + f.getMethod().getName();
    }

    /** A thread's name with its trailing number dropped, so pools read as one group. */
    private static String threadGroup(RecordedEvent e) {
        RecordedThread t = e.getThread("sampledThread");
        String n = t == null ? "?" : t.getJavaName();
        if (n == null) {
            return "?";
        }
        return n.replaceAll("-\\d+$", "-N");
    }
}

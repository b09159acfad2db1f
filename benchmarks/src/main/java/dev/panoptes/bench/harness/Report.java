package dev.panoptes.bench.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * What a measurement prints: progress lines as it goes, then Markdown tables and notes ready
 * for BENCHMARKS.md, on stdout and, with {@code --out}, appended to a file.
 */
public final class Report {
    private final PrintStream out;
    private final Path file;
    private final StringBuilder markdown = new StringBuilder();

    public Report(PrintStream out, Path file) {
        this.out = out;
        this.file = file;
    }

    /** A progress line: stdout only. */
    public void progress(String line) {
        out.println("  " + line);
        out.flush();
    }

    /** A line of the final report. */
    public void line(String line) {
        out.println(line);
        markdown.append(line).append('\n');
    }

    /** A Markdown table. */
    public void table(List<String> header, List<List<String>> rows) {
        line("| " + String.join(" | ", header) + " |");
        List<String> rule = new ArrayList<>();
        for (int i = 0; i < header.size(); i++) {
            rule.add("---");
        }
        line("|" + String.join("|", rule) + "|");
        for (List<String> row : rows) {
            line("| " + String.join(" | ", row) + " |");
        }
    }

    /** Appends what was reported to the {@code --out} file, if any. */
    public void save() {
        if (file == null) {
            return;
        }
        try {
            Files.writeString(file, markdown.toString() + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            out.println("(appended to " + file + ")");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}

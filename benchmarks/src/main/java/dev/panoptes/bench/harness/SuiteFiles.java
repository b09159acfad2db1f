package dev.panoptes.bench.harness;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Generated JSONL suites: {@code {"id", "prompt", "expected"}} per line, deterministic for a given
 * size and prompt length, with prompts of ordinary words so that they look like text to every
 * layer (no artificially compressible runs of one character).
 */
public final class SuiteFiles {
    private static final String[] WORDS = {"what", "is", "the", "capital", "of", "a", "country", "whose", "largest",
        "river", "flows", "north", "answer", "briefly", "and", "explain", "why", "number", "sum", "two", "three",
        "seven", "plus", "minus", "times", "city", "name", "which", "planet", "closest", "sun", "colour", "sky",
        "in", "daylight", "author", "wrote", "novel", "about", "whale", "year", "war", "ended", "element", "symbol"};

    private SuiteFiles() {
    }

    /**
     * Writes {@code count} vignettes with prompts of about {@code promptChars} characters and a
     * one-word expected answer.
     */
    public static void write(Path file, int count, int promptChars) throws IOException {
        SplittableRandom random = new SplittableRandom(7);
        StringBuilder prompt = new StringBuilder();
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (int i = 0; i < count; i++) {
                prompt.setLength(0);
                prompt.append("Q").append(i).append(':');
                while (prompt.length() < promptChars) {
                    prompt.append(' ').append(WORDS[random.nextInt(WORDS.length)]);
                }
                prompt.append('?');
                w.write("{\"id\":\"v");
                w.write(Integer.toString(i));
                w.write("\",\"prompt\":\"");
                w.write(prompt.toString());
                w.write("\",\"expected\":\"");
                w.write(WORDS[random.nextInt(WORDS.length)]);
                w.write("\"}\n");
            }
        }
    }

    /**
     * Writes {@code count} arithmetic vignettes ("What is A + B?") with their exact answers, the
     * questions the product's stub model answers (wrong on purpose for about one in ten), so that
     * an end-to-end run's accuracy figure means something.
     */
    public static void writeArithmetic(Path file, int count) throws IOException {
        SplittableRandom random = new SplittableRandom(11);
        char[] ops = {'+', '-', '*'};
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (int i = 0; i < count; i++) {
                long a = random.nextInt(1000);
                long b = random.nextInt(1000);
                char op = ops[random.nextInt(ops.length)];
                long answer = op == '+' ? a + b : op == '-' ? a - b : a * b;
                w.write("{\"id\":\"q" + i + "\",\"prompt\":\"What is " + a + " " + op + " " + b
                        + "?\",\"expected\":\"" + answer + "\"}\n");
            }
        }
    }
}

package dev.panoptes.eval.sandbox;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * What one command in a {@link Sandbox} did.
 *
 * @param exitStatus   the command's exit status (128 + the signal when a signal ended it), or
 *                     -1 when it has none because the sandbox itself ended (see {@code failure})
 * @param output       its standard output and standard error, interleaved as written, decoded as
 *                     UTF-8 (malformed bytes replaced); at most the sandbox's
 *                     {@link SandboxLimits#keptOutputBytes()}; never null
 * @param outputCut    true when the command wrote more than is kept, and the rest was lost
 * @param timedOut     true when the command ran past its wall time and was killed
 * @param duration     wall time from sending the command to having its output
 * @param failure      null, or why the sandbox ended during the command (it stopped answering,
 *                     or its protocol was broken by the command): the sandbox is closed then
 */
public record CommandResult(int exitStatus, String output, boolean outputCut, boolean timedOut, Duration duration,
                            String failure) {
    /** @throws NullPointerException when output or duration is missing */
    public CommandResult {
        Objects.requireNonNull(output, "output");
        Objects.requireNonNull(duration, "duration");
    }

    /** True when the command ran to its end and exited 0. */
    public boolean succeeded() {
        return exitStatus == 0 && !timedOut && failure == null;
    }

    /**
     * The output as a model is shown it: at most {@code maxBytes} bytes of UTF-8, its beginning
     * and its end, with a line in the middle saying how much was cut; a line at the end when the
     * sandbox kept only part of the output. Never cuts a character in two.
     *
     * @throws IllegalArgumentException when {@code maxBytes} is below 256
     */
    public String outputForModel(int maxBytes) {
        if (maxBytes < 256) {
            throw new IllegalArgumentException("a tool's output shown to a model needs at least 256 bytes, got "
                    + maxBytes);
        }
        String shown = cut(output, maxBytes);
        return outputCut ? shown + "\n[output stopped being kept here: the command wrote more than the sandbox keeps]"
                : shown;
    }

    /** {@code text} in at most {@code maxBytes} bytes of UTF-8: head and tail around a marker. */
    public static String cut(String text, int maxBytes) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= maxBytes) {
            return text;
        }
        // The marker's length depends on the count it prints; 80 bytes hold it with room to spare.
        int keep = maxBytes - 80;
        int head = characterStart(bytes, keep / 2);
        int tail = characterStart(bytes, bytes.length - (keep - head));
        String marker = "\n[... " + (tail - head) + " bytes of output cut here ...]\n";
        return new String(bytes, 0, head, StandardCharsets.UTF_8) + marker
                + new String(bytes, tail, bytes.length - tail, StandardCharsets.UTF_8);
    }

    /** The index of the character that {@code index} falls in, or {@code index} itself at a boundary. */
    private static int characterStart(byte[] bytes, int index) {
        int i = Math.max(0, Math.min(index, bytes.length));
        while (i > 0 && i < bytes.length && (bytes[i] & 0xC0) == 0x80) {
            i--;
        }
        return i;
    }
}

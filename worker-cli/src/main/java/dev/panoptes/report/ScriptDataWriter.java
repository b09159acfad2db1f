package dev.panoptes.report;

import java.io.IOException;
import java.io.Writer;
import java.util.Objects;

/**
 * Passes JSON through to the inside of an HTML {@code <script>} element so that no string in
 * it can end the element or change how the HTML parser reads it.
 *
 * <p>Inside a script element the HTML parser does not know about JSON strings; it ends the
 * element at the first {@code </script}, and after {@code <!--} followed by {@code <script}
 * it ignores the real closing tag. So, in JSON strings (the only place JSON has a {@code <}):
 * <ul>
 *   <li>{@code </} becomes {@code <\/}: a sample holding {@code </script><script>...} stays text;</li>
 *   <li>{@code <!} becomes {@code <\u0021}, so {@code <!--} never appears;</li>
 *   <li>U+2028 and U+2029 become {@code \u2028} and {@code \u2029}: legal in JSON but line
 *       terminators to older JavaScript parsers.</li>
 * </ul>
 * All three are valid JSON escapes, so {@code JSON.parse} returns the original text.
 *
 * <p>Not thread-safe. Closing it does not close the underlying writer.
 */
final class ScriptDataWriter extends Writer {
    private final Writer out;
    /** Whether the last character written was a '<', whose follower may need escaping. */
    private boolean afterLessThan;

    ScriptDataWriter(Writer out) {
        this.out = Objects.requireNonNull(out, "out");
    }

    @Override
    public void write(char[] chars, int offset, int length) throws IOException {
        for (int i = offset; i < offset + length; i++) {
            write(chars[i]);
        }
    }

    @Override
    public void write(String text, int offset, int length) throws IOException {
        for (int i = offset; i < offset + length; i++) {
            write(text.charAt(i));
        }
    }

    @Override
    public void write(int c) throws IOException {
        if (afterLessThan && c == '/') {
            out.write("\\/");
        } else if (afterLessThan && c == '!') {
            out.write("\\u0021");
        } else if (c == '\u2028') {
            out.write("\\u2028");
        } else if (c == '\u2029') {
            out.write("\\u2029");
        } else {
            out.write(c);
        }
        afterLessThan = c == '<';
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    /** Flushes only: the underlying writer belongs to the caller. */
    @Override
    public void close() throws IOException {
        out.flush();
    }
}

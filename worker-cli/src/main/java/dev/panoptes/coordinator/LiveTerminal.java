package dev.panoptes.coordinator;

import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.jline.utils.Curses;
import org.jline.utils.InfoCmp.Capability;

import java.io.IOException;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * Standard error as a live terminal: how wide it is and how to rewrite the progress line in
 * place, or nothing when it is not one. Detection and terminfo come from JLine, so the answer is
 * the terminal's own: a pipe, a file, a CI log, {@code TERM=dumb} or an unknown terminal type all
 * get the plain progress lines instead.
 *
 * <p><b>Threads.</b> Opened by the caller, then used and closed by the console thread only. JLine
 * is asked for no signal handling (it would take over Ctrl-C from the JVM's shutdown hooks), so
 * a resize is seen by asking the size again, at most once every {@value #SIZE_CHECK_MS} ms.
 */
final class LiveTerminal implements AutoCloseable {
    static final long SIZE_CHECK_MS = 2_000;

    private final IntSupplier columns;
    private final String carriageReturn;
    private final String clearToEnd;
    private final AutoCloseable resource;
    /** Owned by the console thread: the width last asked, and when. */
    private int width;
    private long widthAt = Long.MIN_VALUE;

    /**
     * @param columns        the terminal's width now (called at most every {@value #SIZE_CHECK_MS} ms)
     * @param carriageReturn what moves to the start of the line
     * @param clearToEnd     what clears from there to the end of the line; empty to pad with spaces
     */
    LiveTerminal(IntSupplier columns, String carriageReturn, String clearToEnd, AutoCloseable resource) {
        this.columns = columns;
        this.carriageReturn = carriageReturn;
        this.clearToEnd = clearToEnd;
        this.resource = resource;
    }

    /**
     * Standard error as a live terminal, or null when it is not one (or when {@code TERM} is
     * {@code dumb}). Never throws: a terminal JLine cannot open is no terminal. JLine is asked
     * only when {@link System#console()} says the process is interactive (its input and output
     * are a terminal), which costs nothing; asking JLine costs a tenth of a second or more (it
     * runs {@code test -t} and {@code stty}), which a pipe, a CI log or a test need not pay. So
     * {@code coordinator > summary.txt} gets plain lines too: never a bar where there is no terminal.
     */
    static LiveTerminal openStandardError(Map<String, String> env) {
        if (System.console() == null || "dumb".equals(env.get("TERM"))) {
            return null;
        }
        Terminal terminal;
        try {
            terminal = TerminalBuilder.builder()
                    .system(true)
                    .systemOutput(TerminalBuilder.SystemOutput.SysErr)
                    .nativeSignals(false)
                    .dumb(true)
                    .build();
        } catch (IOException | RuntimeException | LinkageError e) {
            return null;
        }
        String type = terminal.getType();
        if (type == null || type.startsWith(Terminal.TYPE_DUMB)) {
            close(terminal);
            return null;
        }
        String cr = capability(terminal, Capability.carriage_return);
        return new LiveTerminal(() -> terminal.getSize().getColumns(), cr.isEmpty() ? "\r" : cr,
                capability(terminal, Capability.clr_eol), terminal);
    }

    /** The capability's text as the terminal takes it (terminfo padding resolved); empty when it has none. */
    private static String capability(Terminal terminal, Capability capability) {
        String raw = terminal.getStringCapability(capability);
        if (raw == null) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        Curses.tputs(text, raw);
        return text.toString();
    }

    /** The width in columns, asked again when the last answer is older than {@value #SIZE_CHECK_MS} ms. */
    int columns() {
        long now = System.nanoTime();
        if (widthAt == Long.MIN_VALUE || now - widthAt > SIZE_CHECK_MS * 1_000_000) {
            try {
                width = columns.getAsInt();
            } catch (RuntimeException e) {
                width = 0; // ProgressBar takes an unknown width as 80
            }
            widthAt = now;
        }
        return width;
    }

    /** The text that replaces the line on screen with {@code line}, which is {@code previous} columns long. */
    String rewrite(String line, int previous) {
        if (clearToEnd.isEmpty()) {
            return carriageReturn + line + " ".repeat(Math.max(0, previous - line.length()));
        }
        return carriageReturn + line + clearToEnd;
    }

    /** The text that blanks the line on screen, {@code previous} columns long, leaving the cursor at its start. */
    String blank(int previous) {
        return clearToEnd.isEmpty() ? carriageReturn + " ".repeat(previous) + carriageReturn
                : carriageReturn + clearToEnd;
    }

    @Override
    public void close() {
        close(resource);
    }

    private static void close(AutoCloseable resource) {
        try {
            resource.close();
        } catch (Exception e) {
            // The terminal's settings were never changed: nothing to restore.
        }
    }
}

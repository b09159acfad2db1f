package dev.panoptes.cli;

import java.io.Console;
import java.lang.reflect.Method;

/**
 * Asking the person at the terminal to confirm, for commands that destroy something
 * ({@code runs delete}): whether there is a person to ask (standard input and output are a
 * terminal), and their answer. Tests give one of their own. {@link #SYSTEM} reads the JVM's
 * console; used from the command's thread only.
 */
interface Prompt {
    /** The JVM's console: interactive when the JVM has one that is a terminal. */
    Prompt SYSTEM = new Prompt() {
        @Override
        public boolean interactive() {
            Console console = System.console();
            return console != null && isTerminal(console);
        }

        @Override
        public String ask(String question) {
            Console console = System.console();
            return console == null ? null : console.readLine("%s", question);
        }
    };

    /** True when a person can answer: standard input and output are a terminal. */
    boolean interactive();

    /** Prints {@code question} and returns the line answered, or null at the end of input. */
    String ask(String question);

    /**
     * From JDK 22 on, a console exists even when input or output is redirected, and
     * {@code Console.isTerminal()} (absent from JDK 17, which this code is built for) tells; before
     * that, having one means a terminal.
     */
    private static boolean isTerminal(Console console) {
        try {
            Method isTerminal = Console.class.getMethod("isTerminal");
            return (Boolean) isTerminal.invoke(console);
        } catch (NoSuchMethodException e) {
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}

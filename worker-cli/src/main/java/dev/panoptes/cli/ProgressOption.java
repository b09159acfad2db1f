package dev.panoptes.cli;

import picocli.CommandLine.Option;

/**
 * {@code --no-progress} of the commands that run a coordinator ({@code coordinator}, {@code demo}):
 * the live progress bar, or the plain progress lines even on a terminal. Whether standard error
 * is a terminal at all is the coordinator's to find out (the bar is drawn only where it is).
 */
final class ProgressOption {
    @Option(names = "--no-progress", order = 990,
            description = "No live progress bar: print the plain progress line every few seconds, as on a pipe,"
                    + " a file or a CI log. The bar is also off when standard error is not a terminal or TERM=dumb.")
    boolean off;

    /** Whether to draw the live bar, where standard error turns out to be a terminal. */
    boolean live() {
        return !off;
    }
}

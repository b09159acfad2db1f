package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One command run as a user types it, in process: its exit code, what it printed on each stream,
 * and its {@code --summary-json} when it wrote one. For the CLI tests of this package.
 *
 * @param exit the exit code
 * @param out  standard output (the summary)
 * @param err  standard error (the console)
 */
record EvalRun(int exit, String out, String err) {
    /** Runs {@code args} (the command's name first). */
    static EvalRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        return new EvalRun(exit, out.toString(), err.toString());
    }

    /** Runs {@code args} as {@link #of} does; the command must exit 0. @return its standard output */
    static String succeeded(String... args) {
        EvalRun r = of(args);
        assertThat(r.exit()).as("%s exits 0; %s", String.join(" ", args), r.console()).isZero();
        return r.out();
    }

    /** The summary JSON the run wrote to {@code file}. */
    static JsonNode summary(Path file) throws IOException {
        return new ObjectMapper().readTree(file.toFile());
    }

    /** The run id a summary names ("Run complete in 0.4 s (run id ...)"); fails the test when it names none. */
    static String runIdOf(String summary) {
        int at = summary.indexOf("(run id ");
        assertThat(at).as("a run id in:%n%s", summary).isNotNegative();
        return summary.substring(at + "(run id ".length(), summary.indexOf(')', at));
    }

    /** The run id this command's summary names. */
    String runId() {
        return runIdOf(out);
    }

    /** Both streams, for a failed assertion's message. */
    String console() {
        return "exit " + exit + "\n--- stdout:\n" + out + "\n--- stderr:\n" + err;
    }
}

package dev.panoptes.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchMainTest {
    private static final List<String> COMMANDS = List.of("dispatch", "dispatch-session", "floor", "codec", "store",
            "scale", "failure", "scheduling", "e2e", "ratelimit", "model-client", "jfr", "suite", "fleet");

    private final StringWriter out = new StringWriter();

    private int execute(String... args) {
        CommandLine cli = new CommandLine(new BenchMain());
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(new StringWriter()));
        return cli.execute(args);
    }

    @Test
    void listsEveryCommandInTheRootHelp() {
        assertThat(execute("--help")).isZero();
        assertThat(out.toString()).startsWith("Usage: benchmarks.jar [-hV] [COMMAND]");
        for (String command : COMMANDS) {
            assertThat(out.toString()).containsPattern("(?m)^  " + command + " ");
        }
    }

    @Test
    void everyCommandPrintsItsHelpWithTheSharedOptions() {
        for (String command : COMMANDS) {
            out.getBuffer().setLength(0);
            assertThat(execute(command, "--help")).as(command).isZero();
            assertThat(out.toString()).as(command).startsWith("Usage: benchmarks.jar " + command + " ");
            if (!command.equals("jfr")) {
                assertThat(out.toString()).as(command).contains("--runs=<runs>", "--out=FILE", "--jvm-opt=OPT",
                        "--coordinator-jvm-opt=OPT", "-v, --verbose");
            }
        }
    }

    @Test
    void rejectsRunsBelowOneBeforeStartingAnything() {
        assertThat(execute("codec", "--runs", "0")).isEqualTo(2);
    }

    @Test
    void rejectsAnUnknownModelClientBeforeStartingAnything() {
        assertThat(execute("model-client", "--clients", "nope")).isEqualTo(2);
    }

    @Test
    void sharedOptionGroupsKeepTheirDefaults() {
        ScaleCommand scale = new ScaleCommand();
        new CommandLine(scale).parseArgs();
        assertThat(scale.heartbeat.heartbeatMs).isEqualTo(1000);
        assertThat(scale.heartbeat.heartbeatTimeoutMs).isEqualTo(3000);
        assertThat(scale.runs()).isEqualTo(3);
        E2eCommand e2e = new E2eCommand();
        new CommandLine(e2e).parseArgs("--runs", "2");
        assertThat(e2e.fleet.workers).isEqualTo(4);
        assertThat(e2e.fleet.latencyMs).isEqualTo(50);
        assertThat(e2e.product.workerJar).hasToString("worker-cli/target/worker.jar");
        assertThat(e2e.runs()).isEqualTo(2);
    }
}

package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code fleet} measurement end to end, tiny: the product's coordinator command (the freshly
 * built worker.jar, or the same main from the classpath) against a fake fleet of 20 connections,
 * 2,000 vignettes. The run itself checks that every vignette was stored exactly once (it fails
 * otherwise); here the report's figures must be there and positive.
 */
class FleetBenchTest {
    private static final Pattern NUMBER = Pattern.compile("(\\d[\\d,]*(?:\\.\\d+)?) \\(");

    @Test
    void measuresTheRealCoordinatorAgainstAFakeFleetAndReportsEveryFigure() throws Exception {
        Path jar = Path.of("../worker-cli/target/worker.jar");
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        Report report = new Report(new PrintStream(captured, true, StandardCharsets.UTF_8), null);
        try (BenchContext ctx = new BenchContext("fleet-test", false, List.of(), List.of())) {
            int code = FleetBench.run(ctx, report, new FleetBench.Options(List.of(jar), 1, 2000, 20, 8,
                    List.of(0L), List.of(1), "sqlite", null, 1, 10, null, "cpu"));
            assertThat(code).isZero();
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        String row = out.lines().filter(l -> l.startsWith("| " + jar + ", job size 1, latency 0 ms |"))
                .findFirst().orElseThrow(() -> new AssertionError("no result row in:\n" + out));
        Matcher m = NUMBER.matcher(row);
        int figures = 0;
        while (m.find()) {
            assertThat(Double.parseDouble(m.group(1).replace(",", ""))).as("a figure of " + row).isPositive();
            figures++;
        }
        // answers/s, us steady, us whole, run s, 2 x context switches, first dispatch, heap, RSS, fleet us
        assertThat(figures).as(row).isEqualTo(10);
        String threads = out.lines().filter(l -> l.startsWith("| " + jar + ", job size 1") && !l.equals(row))
                .findFirst().orElseThrow();
        assertThat(threads).as("the per-thread row").contains(" | ");
        Matcher store = NUMBER.matcher(threads);
        assertThat(store.find()).isTrue();
        assertThat(Double.parseDouble(store.group(1))).as("the result-store thread's CPU").isPositive();
        // The by-phase table: one row per phase, the start's CPU (JVM start, reading, planning) above 0.
        for (String phase : FleetBench.PHASES) {
            assertThat(out.lines().filter(l -> l.startsWith("| " + jar + ", job size 1, latency 0 ms | " + phase + " |")))
                    .as("the row of phase " + phase).hasSize(1);
        }
        String start = out.lines().filter(l -> l.contains("| " + FleetBench.PHASES.get(0) + " |")).findFirst()
                .orElseThrow();
        Matcher startCpu = NUMBER.matcher(start.substring(start.indexOf(FleetBench.PHASES.get(0))));
        assertThat(startCpu.find() && startCpu.find()).as(start).isTrue();
        assertThat(Double.parseDouble(startCpu.group(1).replace(",", ""))).as("the start's CPU in " + start)
                .isPositive();
        assertThat(Files.exists(jar) ? out : "").doesNotContain("NaN");
    }
}

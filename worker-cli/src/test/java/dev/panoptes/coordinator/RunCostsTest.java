package dev.panoptes.coordinator;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunInfo;
import dev.panoptes.report.RunCosts;
import dev.panoptes.report.RunStats;
import dev.panoptes.report.SampleRow;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Tokens per model in the summary, and the cost at the prices given, priced models only. */
class RunCostsTest {
    private static final String RUN = "0123456789abcdef";

    @Test
    void theSummaryCountsTokensPerModelAndTheCostCoversThePricedModelsSayingWhichAreNot() {
        List<SampleRow> samples = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            samples.add(sample("a", "q" + i, 1_000L, 100L));
            samples.add(sample("b", "q" + i, 2_000L, 200L));
        }
        RunData data = new RunData(new RunInfo(RUN, "s", List.of("a", "b"), "exact", 1, null, 3), samples, List.of(),
                List.of());
        JobPlan plan = JobPlan.of(new Suite("s", List.of(new Vignette("q0", "p"), new Vignette("q1", "p"),
                new Vignette("q2", "p")), "0".repeat(64)), SpecParams.NONE, 3, "", List.of("a", "b"), 1);
        RunSummary summary = RunSummary.of(plan, new RunReport(2, 0, 2, List.of(), 2, 0, 0, Map.of(),
                Duration.ofSeconds(1)), data, null);

        assertThat(summary.render()).contains("tokens:      9900 spent by this run's model calls (9000 prompt + 900 completion)")
                .contains("    a: 3300 (3000 prompt + 300 completion)")
                .contains("    b: 6600 (6000 prompt + 600 completion)");
        // a: 3,000 x 2 + 300 x 10 per million = 0.009 USD; b has no price.
        RunCosts costs = RunCosts.of(RunStats.of(data, null), Prices.of(Map.of("a", new Price(2, 10))));
        assertThat(costs.totalUsd()).isEqualTo(0.009);
        assertThat(costs.render()).contains("cost:        0.0090 USD (without b: no --price for it)")
                .contains("    a: 0.0090 USD").contains("    b: no price");
        assertThat(RunCosts.of(RunStats.of(data, null), Prices.NONE).render()).isEmpty();
    }

    private static SampleRow sample(String model, String vignette, Long prompt, Long completion) {
        return new SampleRow(RUN, model, 0, vignette, RUN + "-job", "question", "yes", "yes", 1.0, null, Map.of(),
                "w", model, 5L, prompt, completion, "stop");
    }
}

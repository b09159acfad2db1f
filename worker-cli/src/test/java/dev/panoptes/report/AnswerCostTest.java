package dev.panoptes.report;

import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** One answer's cost ({@link RunCosts#answerUsd}): cached answers cost 0, and a run's answers add up to its total. */
class AnswerCostTest {
    @Test
    void aRunsAnswersAddUpToItsTotalWithCachedAnswersAtZeroAndUnpricedModelsWithout() {
        RunData fixture = ReportFixtures.run();
        List<SampleRow> samples = new ArrayList<>(fixture.samples());
        // A cached answer repeats its source's usage; it cost this run nothing.
        SampleRow cached = new SampleRow(ReportFixtures.RUN, "m-a", 3, "v1", "j-m-a-v1-3", "p", "Paris", "Paris", 1.0,
                null, Map.of(), "w-1", "m-a-2025", 1L, 5_000L, 700L, "stop", null, "r-0");
        samples.add(cached);
        RunData run = new RunData(fixture.info(), samples, fixture.failures(), fixture.workerEvents());
        Prices prices = Prices.of(Map.of("m-a", new Price(0.15, 0.6), "m-b", new Price(2.5, 10)));

        assertThat(RunCosts.answerUsd(cached, prices)).isZero();
        assertThat(RunCosts.answerUsd(samples.get(0), prices)).isCloseTo((10 * 0.15 + 2 * 0.6) / 1e6, within(1e-15));
        assertThat(RunCosts.answerUsd(samples.get(samples.size() - 2), prices)).as("m-c has no price").isNull();
        double sum = samples.stream().map(s -> RunCosts.answerUsd(s, prices)).filter(c -> c != null)
                .mapToDouble(Double::doubleValue).sum();
        assertThat(sum).isCloseTo(RunCosts.of(RunStats.of(run, null), prices).totalUsd(), within(1e-12));
    }
}

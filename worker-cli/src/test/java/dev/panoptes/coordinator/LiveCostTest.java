package dev.panoptes.coordinator;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.cost.Price;
import dev.panoptes.control.cost.Prices;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LiveCostTest {
    private final List<Double> fed = new ArrayList<>();
    private final ProgressCounts counts = new ProgressCounts() {
        @Override
        public void addCacheHits(int answers) {
        }

        @Override
        public void addCost(double dollars) {
            fed.add(dollars);
        }
    };

    @Test
    void feedsWhatEachAnsweredJobCostAtItsModelsPrice() {
        LiveCost cost = new LiveCost(Prices.of(Map.of("m", new Price(1.0, 2.0))), counts);

        // 1,000,000 prompt tokens at 1 USD and 500,000 completion tokens at 2 USD per million: 2 USD.
        cost.onCompleted(job("m"), null, outcome(new Usage(600_000, 300_000), new Usage(400_000, 200_000)), null);
        // A record without usage, and a model with no price, cost nothing and feed nothing.
        cost.onCompleted(job("m"), null, outcome((Usage) null), null);
        cost.onCompleted(job("unpriced"), null, outcome(new Usage(1_000, 1_000)), null);

        assertThat(fed).hasSize(1);
        assertThat(fed.get(0)).isCloseTo(2.0, within(1e-9));
    }

    private static Job job(String model) {
        return new Job(new JobId("j-" + model), new EvalSpec("s", List.of(new Vignette("v", "p")),
                new SpecParams(null, 0.0, null, null, model)));
    }

    private static JobOutcome outcome(Usage... usages) {
        List<ResponseRecord> records = new ArrayList<>();
        for (int i = 0; i < usages.length; i++) {
            records.add(new ResponseRecord("v" + i, "a", "m", "stop", 1L, usages[i]));
        }
        return new JobOutcome(new JobId("j"), records);
    }
}

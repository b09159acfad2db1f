package dev.panoptes.coordinator;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.ResultStore;

import java.util.Objects;

/**
 * Feeds the console what each answered job cost at the given prices, as the answers arrive, so
 * that the progress bar shows the money spent while the run goes. The summary's cost is computed
 * again from the stored records ({@link dev.panoptes.report.RunCosts}); this is only the running figure. Answers the
 * response cache served never pass here: they cost no call.
 *
 * <p>Called on the scheduler's thread, as every {@link ProgressListener}; an increment per job.
 */
final class LiveCost implements ProgressListener {
    private final Prices prices;
    private final ProgressCounts counts;

    LiveCost(Prices prices, ProgressCounts counts) {
        this.prices = Objects.requireNonNull(prices, "prices");
        this.counts = Objects.requireNonNull(counts, "counts");
    }

    @Override
    public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
        double usd = prices.cost(job, outcome);
        if (usd > 0) {
            counts.addCost(usd);
        }
    }
}

package dev.panoptes.coordinator;

import dev.panoptes.control.Job;
import dev.panoptes.control.Plural;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.cost.Prices;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.UnstoredSpend;
import dev.panoptes.report.Figures;
import dev.panoptes.report.RunCosts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a run's failed attempts spent on model calls that answered but whose answers were not
 * stored (the job failed after them, and was retried or failed for good): tokens paid for that no
 * stored record shows, so neither the summary's tokens line nor its cost counts them. Told by the
 * scheduler ({@link ProgressListener#onAttemptSpent}); what a worker did not see (a call an
 * attempt's deadline or cancellation cut off) is not in it. The coordinator keeps it with the
 * sitting when the sitting ends ({@link #spend()}), so that {@code runs show}, the report and a
 * later sitting's budget count it too.
 *
 * <p>Threads: written on the scheduler's thread, read on any; its methods are synchronized.
 */
final class AttemptSpend implements ProgressListener {
    /** Per model, in the order first met. */
    private final Map<String, Usage> byModel = new LinkedHashMap<>();
    /** The attempts per model, in the same order. */
    private final Map<String, Long> attemptsByModel = new LinkedHashMap<>();
    private long attempts;

    @Override
    public synchronized void onAttemptSpent(Job job, WorkerHandle worker, Usage usage) {
        String model = String.valueOf(job.model());
        byModel.merge(model, usage, Usage::plus);
        attemptsByModel.merge(model, 1L, Long::sum);
        attempts++;
    }

    /**
     * What was spent so far, one entry per model in the order first met: what the store keeps
     * with the sitting when it ends ({@link dev.panoptes.control.store.JdbcResultStore#endSitting(String,
     * List)}); empty when nothing was.
     */
    synchronized List<UnstoredSpend> spend() {
        List<UnstoredSpend> spend = new ArrayList<>();
        for (Map.Entry<String, Usage> e : byModel.entrySet()) {
            spend.add(new UnstoredSpend(e.getKey(), attemptsByModel.getOrDefault(e.getKey(), 0L),
                    e.getValue().promptTokens(), e.getValue().completionTokens()));
        }
        return spend;
    }

    /** The failed attempts that spent tokens. */
    synchronized long attempts() {
        return attempts;
    }

    /** The tokens those attempts spent, all models together. */
    synchronized Usage tokens() {
        Usage all = Usage.ZERO;
        for (Usage u : byModel.values()) {
            all = all.plus(u);
        }
        return all;
    }

    /** What those tokens cost at {@code prices}, or null when none of their models has a price. */
    synchronized Double usd(Prices prices) {
        return RunCosts.unstoredUsd(spend(), prices);
    }

    /** The summary's line, or "" when no failed attempt spent anything. */
    synchronized String render(Prices prices) {
        if (attempts == 0) {
            return "";
        }
        Usage t = tokens();
        Double usd = usd(prices);
        return String.format(Locale.ROOT, "  not stored:  %d tokens (%d prompt + %d completion)%s spent by the calls"
                + " of %s that failed after them; their answers were not stored, so the tokens and cost above leave"
                + " them out%n", t.totalTokens(), t.promptTokens(), t.completionTokens(),
                usd == null ? "" : ", " + Figures.usd(usd) + " USD,", Plural.of(attempts, "attempt"));
    }
}

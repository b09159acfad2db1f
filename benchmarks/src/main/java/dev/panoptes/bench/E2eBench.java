package dev.panoptes.bench;

import java.util.List;
import java.util.Locale;

/**
 * Measurement 5, end to end. (The process part is added once the coordinator command lands.)
 */
final class E2eBench {
    private E2eBench() {
    }

    /** Reports the store micro-measurement. */
    static void reportStore(Report report, List<StoreBench.Result> results, int outcomes) {
        Stats records = Stats.of(results.stream().map(StoreBench.Result::recordsPerSecond).toList());
        Stats perOutcome = Stats.of(results.stream().map(StoreBench.Result::microsPerOutcome).toList());
        report.line("");
        report.line("### JdbcResultStore on SQLite (" + results.size() + " runs of " + outcomes
                + " outcomes x 8 records, one transaction per outcome, fresh database per run, after a warm-up run;"
                + " median (min-max))");
        report.line("");
        report.line("Machine: " + Machine.describe() + ".");
        report.line("");
        report.table(List.of("records/s", "outcomes/s", "us per outcome (8 records)"), List.of(List.of(
                records.formatRate(),
                Stats.of(results.stream().map(StoreBench.Result::outcomesPerSecond).toList()).formatRate(),
                perOutcome.format(0))));
        report.line("");
        report.line(String.format(Locale.ROOT, "At %.0f records/s the store alone would cap a run at that many"
                + " vignettes per second.", records.median()));
    }
}

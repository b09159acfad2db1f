package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import dev.panoptes.control.store.JdbcResultStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Records per second written by {@link JdbcResultStore} on SQLite (a file in a temporary
 * directory, WAL, as the coordinator opens it): N outcomes of 8 records, each outcome one
 * {@code record} call and so one transaction, in this JVM, on one thread, as the scheduler
 * stores them. A fresh database per run, after a warm-up run.
 */
public final class StoreBench {
    /** One run's rate. */
    public record Result(double recordsPerSecond, double outcomesPerSecond, double microsPerOutcome) {
    }

    private StoreBench() {
    }

    public static List<Result> measure(Report report, int runs, int outcomes, int warmupOutcomes) throws IOException {
        Path dir = Files.createTempDirectory("panoptes-store-bench");
        try {
            once(dir.resolve("warmup.db"), warmupOutcomes, "w");
            List<Result> results = new ArrayList<>();
            for (int r = 1; r <= runs; r++) {
                Result res = once(dir.resolve("run" + r + ".db"), outcomes, "r" + r);
                results.add(res);
                report.progress(String.format(Locale.ROOT, "store run %d: %,.0f records/s (%,.0f outcomes/s,"
                        + " %.0f us per outcome) [load %.2f]", r, res.recordsPerSecond(), res.outcomesPerSecond(),
                        res.microsPerOutcome(), Machine.loadAverage()));
            }
            return results;
        } finally {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private static Result once(Path db, int outcomes, String prefix) {
        List<JobOutcome> batch = new ArrayList<>(outcomes);
        for (int i = 0; i < outcomes; i++) {
            batch.add(outcome(prefix + "-job-" + i));
        }
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            long t0 = System.nanoTime();
            for (JobOutcome o : batch) {
                store.record(o, "bench-worker");
            }
            long nanos = System.nanoTime() - t0;
            long stored = store.recordCount();
            if (stored != 8L * outcomes) {
                throw new IllegalStateException("stored " + stored + " records, expected " + 8L * outcomes);
            }
            return new Result(8.0 * outcomes * 1e9 / nanos, outcomes * 1e9 / nanos, nanos / 1e3 / outcomes);
        }
    }

    /** An outcome of 8 records shaped like a model's: a sentence of text, model, finish reason, latency, usage. */
    private static JobOutcome outcome(String jobId) {
        List<ResponseRecord> records = new ArrayList<>(8);
        for (int v = 0; v < 8; v++) {
            records.add(new ResponseRecord("v" + v, "The answer to vignette " + v + " of " + jobId
                    + " is a sentence of ordinary length, about what a model says.", "stub-model", "stop", 50L,
                    new Usage(24, 18)));
        }
        return new JobOutcome(JobId.of(jobId), records);
    }
}

package dev.panoptes.bench.fleet;

import dev.panoptes.bench.harness.Machine;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Records per second written by {@link JdbcResultStore} on SQLite (a file in a temporary
 * directory, WAL, as the coordinator opens it): N outcomes of 8 records (or as many as asked),
 * in this JVM, on one thread. With a batch of 1 each outcome is one {@code record} call and so one
 * transaction; with a batch of B, B outcomes go to one {@code recordAll} call and one
 * transaction, as the scheduler's store writer hands over the answers queued behind each other.
 * A fresh database per run, after a warm-up run.
 */
public final class StoreBench {
    /** One run's rate. */
    public record Result(double recordsPerSecond, double outcomesPerSecond, double microsPerOutcome) {
    }

    private StoreBench() {
    }

    public static List<Result> measure(Report report, int runs, int outcomes, int warmupOutcomes) throws IOException {
        return measure(report, runs, outcomes, warmupOutcomes, 1, 8);
    }

    /**
     * @param batch   outcomes per store call (and transaction); 1 for one {@code record} call each
     * @param records records (vignettes) per outcome
     */
    public static List<Result> measure(Report report, int runs, int outcomes, int warmupOutcomes, int batch,
                                       int records) throws IOException {
        return measure(report, runs, outcomes, warmupOutcomes, batch, records, null);
    }

    /**
     * @param postgresUrl a PostgreSQL JDBC URL (user and password in it) to write to instead of a
     *                    SQLite file, or null; each run writes job ids of its own there
     */
    public static List<Result> measure(Report report, int runs, int outcomes, int warmupOutcomes, int batch,
                                       int records, String postgresUrl) throws IOException {
        Path dir = Files.createTempDirectory("panoptes-store-bench");
        String tag = Long.toString(System.nanoTime(), 36) + "-b" + batch + "-";
        Function<String, JdbcResultStore> open = name -> postgresUrl == null
                ? JdbcResultStore.openSqlite(dir.resolve(name + ".db"))
                : JdbcResultStore.openPostgres(postgresUrl, null, null);
        try {
            once(open.apply("warmup"), warmupOutcomes, tag + "w", batch, records);
            List<Result> results = new ArrayList<>();
            for (int r = 1; r <= runs; r++) {
                Result res = once(open.apply("run" + r), outcomes, tag + "r" + r, batch, records);
                results.add(res);
                report.progress(String.format(Locale.ROOT, "store run %d, batch %d: %,.0f records/s (%,.0f"
                        + " outcomes/s, %.1f us per outcome) [load %.2f]", r, batch, res.recordsPerSecond(),
                        res.outcomesPerSecond(), res.microsPerOutcome(), Machine.loadAverage()));
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

    private static Result once(JdbcResultStore opened, int outcomes, String prefix, int batch, int records) {
        List<JobOutcome> all = new ArrayList<>(outcomes);
        for (int i = 0; i < outcomes; i++) {
            all.add(outcome(prefix + "-job-" + i, records));
        }
        try (JdbcResultStore store = opened) {
            long before = store.recordCount();
            List<ResultStore.Written> done = new ArrayList<>(outcomes);
            long t0 = System.nanoTime();
            if (batch <= 1) {
                for (JobOutcome o : all) {
                    store.record(o, "bench-worker");
                }
            } else {
                List<ResultStore.Answer> answers = new ArrayList<>(batch);
                for (int from = 0; from < outcomes; from += batch) {
                    answers.clear();
                    for (JobOutcome o : all.subList(from, Math.min(outcomes, from + batch))) {
                        answers.add(new ResultStore.Answer(null, o, "bench-worker"));
                    }
                    store.recordAll(answers, done);
                }
            }
            long nanos = System.nanoTime() - t0;
            long stored = store.recordCount() - before;
            if (stored != (long) records * outcomes) {
                throw new IllegalStateException("stored " + stored + " records, expected " + (long) records * outcomes);
            }
            return new Result((double) records * outcomes * 1e9 / nanos, outcomes * 1e9 / nanos,
                    nanos / 1e3 / outcomes);
        }
    }

    /** An outcome of n records shaped like a model's: a sentence of text, model, finish reason, latency, usage. */
    private static JobOutcome outcome(String jobId, int n) {
        List<ResponseRecord> records = new ArrayList<>(n);
        for (int v = 0; v < n; v++) {
            records.add(new ResponseRecord("v" + v, "The answer to vignette " + v + " of " + jobId
                    + " is a sentence of ordinary length, about what a model says.", "stub-model", "stop", 50L,
                    new Usage(24, 18)));
        }
        return new JobOutcome(JobId.of(jobId), records);
    }
}

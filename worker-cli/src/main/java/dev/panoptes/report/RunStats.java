package dev.panoptes.report;

import dev.panoptes.control.Usage;
import dev.panoptes.control.stats.Estimate;
import dev.panoptes.control.stats.PairedDifference;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Every number a person sees about a run, computed in one place: the text summary, the CSV and
 * JSON exports and the HTML report all take their figures from here (and print them with
 * {@link Figures}), so they cannot disagree.
 *
 * <p>What it computes, from a {@link RunData}:
 * <ul>
 *   <li>per model ({@link #models()}): samples, scored and unscored counts, the accuracy
 *       {@link Estimate} over scored samples clustered by vignette, per-group estimates when a
 *       group-by key is given, token totals and failed jobs; failed answers are counted, scored
 *       0 in the figure, and the figure without them is given as well;</li>
 *   <li>per worker ({@link #workers()}): distinct jobs, samples, failures, quarantines and the
 *       p50 and p95 latency;</li>
 *   <li>with two or more models, a paired comparison of each model against the first
 *       ({@link #comparison()}).</li>
 * </ul>
 *
 * <p>A sample whose score is null or not finite counts as unscored: it is in {@code samples}
 * and {@code unscored}, and in no estimate. A failed answer ({@link SampleRow#failed()}: the
 * model API gave none for its vignette) is scored 0 in every figure ({@link SampleRow#figureScore()}),
 * since a model that cannot answer a question has not answered it right; {@link ModelStats#withoutFailed()}
 * is the same figure with failed answers left out, so both are on record.
 *
 * <p>Every figure is computed by {@link RunTally}, one answer at a time, from a run's list of
 * answers ({@link #of}) or from answers streamed from the store ({@link RunDataLoader#stats}),
 * which holds per vignette, not per answer.
 *
 * <p>Immutable and thread-safe once built; building is O(samples) apart from sorting each
 * worker's latencies.
 */
public final class RunStats {
    /** The group a sample falls in when it has no value for the group-by key. */
    public static final String NO_GROUP = "(none)";
    /** The worker id shown for samples that recorded none. */
    public static final String UNKNOWN_WORKER = "(unknown)";

    private final RunInfo info;
    private final String groupBy;
    private final List<ModelStats> models;
    private final List<WorkerStats> workers;
    private final List<Comparison> comparison;
    private final CacheHits cacheHits;
    private final ChoiceMetrics choiceMetrics;
    private final PassAtKFigures passAtK;
    private final List<String> scorers;
    private final Long latencyP50Ms;
    private final Long latencyP95Ms;

    RunStats(RunInfo info, String groupBy, List<ModelStats> models, List<WorkerStats> workers,
             List<Comparison> comparison, CacheHits cacheHits, ChoiceMetrics choiceMetrics, PassAtKFigures passAtK,
             List<String> scorers, Long latencyP50Ms, Long latencyP95Ms) {
        this.cacheHits = cacheHits;
        this.choiceMetrics = choiceMetrics;
        this.info = info;
        this.groupBy = groupBy;
        this.models = List.copyOf(models);
        this.workers = List.copyOf(workers);
        this.comparison = List.copyOf(comparison);
        this.passAtK = passAtK;
        this.scorers = List.copyOf(scorers);
        this.latencyP50Ms = latencyP50Ms;
        this.latencyP95Ms = latencyP95Ms;
    }

    /**
     * The metadata key a view of the run breaks its accuracy down by: {@code given} (a command's
     * own {@code --group-by}) when there is one, else the key the run was made with (its
     * manifest's {@code groupBy}), else null.
     */
    public static String groupByOf(RunData data, String given) {
        return groupByOf(data.info(), given);
    }

    /** As {@link #groupByOf(RunData, String)}, from the run's header. */
    public static String groupByOf(RunInfo info, String given) {
        if (given != null && !given.isBlank()) {
            return given;
        }
        var manifest = info.manifest();
        return manifest == null ? null : manifest.groupBy();
    }

    /**
     * Computes the statistics of one run.
     *
     * @param data    the run
     * @param groupBy a metadata key to break accuracy down by (for example "topic"); null or
     *                blank for none
     * @return the statistics
     * @throws NullPointerException when data is null
     */
    public static RunStats of(RunData data, String groupBy) {
        Objects.requireNonNull(data, "data");
        RunTally tally = new RunTally(groupBy);
        for (SampleRow row : data.samples()) {
            tally.add(row);
        }
        return tally.stats(data.info(), data.failures(), data.scorers(), WorkerStats.of(data));
    }

    /**
     * The median latency over the run's answers (nearest rank): a model call's, retries
     * included, or a sandboxed sample's whole run; null when none recorded one.
     */
    public Long latencyP50Ms() {
        return latencyP50Ms;
    }

    /** The 95th percentile latency of the run's answers (nearest rank); null when no answer recorded one. */
    public Long latencyP95Ms() {
        return latencyP95Ms;
    }

    /**
     * The scorers that gave the scores, the run's own first ({@link RunData#scorers()}); empty
     * when not known.
     */
    public List<String> scorers() {
        return scorers;
    }

    /** pass@k per model over the run's epochs; empty for a run of one epoch or of partial scores. */
    public PassAtKFigures passAtK() {
        return passAtK;
    }

    /**
     * lm-eval's multiple-choice metrics of the run's answers asked by log-likelihood, recomputed
     * from the answers; empty when it has none.
     */
    public ChoiceMetrics choiceMetrics() {
        return choiceMetrics;
    }

    /** The run's header. */
    public RunInfo info() {
        return info;
    }

    /** The metadata key accuracy is broken down by, or null for none. */
    public String groupBy() {
        return groupBy;
    }

    /**
     * One entry per model: those the run listed, in its order, then any other model seen in
     * the samples or failures, in order of first appearance.
     */
    public List<ModelStats> models() {
        return models;
    }

    /** The statistics of one model, if the run has it. */
    public Optional<ModelStats> model(String name) {
        return models.stream().filter(m -> m.model().equals(name)).findFirst();
    }

    /**
     * One entry per worker that produced a sample or has recorded events, sorted by worker id;
     * empty when the figures were computed from answers streamed from the store
     * ({@link RunDataLoader#stats}), which keeps no answer's job.
     */
    public List<WorkerStats> workers() {
        return workers;
    }

    /**
     * The first model against each other one, in model order; empty with fewer than two models.
     */
    public List<Comparison> comparison() {
        return comparison;
    }

    /** All samples of the run. */
    public int totalSamples() {
        return models.stream().mapToInt(ModelStats::samples).sum();
    }

    /**
     * The samples served from the response cache (no model call), and the runs they copy.
     *
     * @param answers  how many
     * @param fromRuns the runs that answered them first
     * @param tokens   the tokens those answers record (unknown counts as 0): spent by the runs that
     *                 answered them first, not by this one, so in no token total or cost of this run
     */
    public record CacheHits(int answers, Set<String> fromRuns, Usage tokens) {
        public CacheHits {
            fromRuns = Set.copyOf(fromRuns);
        }
    }

    /** What the response cache served to this run ({@link SampleRow#cached()}). */
    public CacheHits cacheHits() {
        return cacheHits;
    }

    /** All failed jobs of the run. */
    public int totalFailures() {
        return models.stream().mapToInt(ModelStats::failures).sum();
    }

    static List<String> modelOrder(RunData data) {
        Set<String> answered = new LinkedHashSet<>();
        for (SampleRow sample : data.samples()) {
            answered.add(sample.model());
        }
        return RunTally.modelOrder(data.info().models(), answered, data.failures());
    }

    /** The sample's value for the group-by key, as a string; {@value #NO_GROUP} when it has none. */
    static String groupOf(SampleRow row, String groupBy) {
        Object value = row.metadata().get(groupBy);
        return value == null ? NO_GROUP : value.toString();
    }

    /**
     * One model's numbers.
     *
     * @param model            the model
     * @param samples          all its samples
     * @param scored           samples in the figure: those with a grade, and failed answers (as 0)
     * @param unscored         samples in no figure: answers without a grade
     * @param accuracy         mean score over the scored samples, clustered by vignette
     * @param byGroup          per value of the group-by key, the same estimate over that group's
     *                         scored samples, sorted by value; empty without a group-by key
     * @param promptTokens     prompt tokens over its samples that called a model, cached answers
     *                         left out (unknown counts as 0)
     * @param completionTokens completion tokens over the same samples (unknown counts as 0)
     * @param failures         its jobs that failed for good
     * @param failedAnswers    its failed answers (the model API gave none for the vignette), in
     *                         {@code scored} and in {@code accuracy} as 0
     * @param withoutFailed    the accuracy with failed answers left out rather than scored 0
     */
    public record ModelStats(String model, int samples, int scored, int unscored, Estimate accuracy,
                             Map<String, Estimate> byGroup, long promptTokens, long completionTokens,
                             int failures, int failedAnswers, Estimate withoutFailed) {
        /** Copies byGroup, keeping its order. */
        public ModelStats {
            byGroup = Collections.unmodifiableMap(new LinkedHashMap<>(byGroup));
        }
    }

    /**
     * One worker's numbers.
     *
     * @param workerId     the worker, or {@value RunStats#UNKNOWN_WORKER}
     * @param jobs         distinct jobs among its samples
     * @param samples      its samples
     * @param failures     failed attempts on it, from the run's worker events (0 when none recorded)
     * @param quarantines  times it was quarantined, from the run's worker events (0 when none recorded)
     * @param latencyP50Ms median latency of its samples, nearest rank; null when none has a latency
     * @param latencyP95Ms 95th percentile latency of its samples, nearest rank; null when none has a latency
     */
    public record WorkerStats(String workerId, int jobs, int samples, long failures, long quarantines,
                              Long latencyP50Ms, Long latencyP95Ms) {

        static List<WorkerStats> of(RunData data) {
            Map<String, Set<String>> jobs = new TreeMap<>();
            Map<String, Integer> samples = new HashMap<>();
            Map<String, List<Long>> latencies = new HashMap<>();
            for (SampleRow row : data.samples()) {
                String worker = row.workerId() == null ? UNKNOWN_WORKER : row.workerId();
                Set<String> workerJobs = jobs.computeIfAbsent(worker, k -> new HashSet<>());
                if (row.jobId() != null) {
                    workerJobs.add(row.jobId());
                }
                samples.merge(worker, 1, Integer::sum);
                if (row.latencyMs() != null) {
                    latencies.computeIfAbsent(worker, k -> new ArrayList<>()).add(row.latencyMs());
                }
            }
            Map<String, long[]> events = new HashMap<>();
            for (WorkerEvents e : data.workerEvents()) {
                jobs.computeIfAbsent(e.workerId(), k -> new HashSet<>());
                long[] sum = events.computeIfAbsent(e.workerId(), k -> new long[2]);
                sum[0] += e.failures();
                sum[1] += e.quarantines();
            }
            List<WorkerStats> workers = new ArrayList<>(jobs.size());
            for (Map.Entry<String, Set<String>> entry : jobs.entrySet()) {
                String worker = entry.getKey();
                long[] sum = events.getOrDefault(worker, new long[2]);
                List<Long> sorted = latencies.getOrDefault(worker, new ArrayList<>());
                Collections.sort(sorted);
                workers.add(new WorkerStats(worker, entry.getValue().size(), samples.getOrDefault(worker, 0),
                        sum[0], sum[1], nearestRank(sorted, 50), nearestRank(sorted, 95)));
            }
            return workers;
        }

        /**
         * The nearest-rank percentile: the smallest value with at least p % of the values at or
         * below it, that is the value at rank ceil(p / 100 * n) (1-based) of the sorted list.
         * It is always one of the observed latencies, never an interpolation.
         */
        static Long nearestRank(List<Long> sorted, int percentile) {
            if (sorted.isEmpty()) {
                return null;
            }
            int rank = (int) Math.ceil(percentile / 100.0 * sorted.size());
            return sorted.get(Math.max(rank, 1) - 1);
        }
    }

    /**
     * How a model did against the baseline (the run's first model) on the vignettes both scored:
     * the {@link ModelComparison} of the two within this run, as a {@link PairedDifference}
     * (paired t over vignettes, failed answers as 0).
     *
     * @param baseline        the first model
     * @param model           the model compared with it
     * @param sharedVignettes V, the vignettes both models have a scored sample of
     * @param paired          the paired difference (positive: {@code model} scored higher)
     */
    public record Comparison(String baseline, String model, int sharedVignettes, PairedDifference paired) {

        /** The mean difference; NaN without shared vignettes. */
        public double difference() {
            return paired.difference();
        }

        /** Its standard error; NaN below two shared vignettes. */
        public double standardError() {
            return paired.standardError();
        }
    }
}

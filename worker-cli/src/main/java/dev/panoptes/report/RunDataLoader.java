package dev.panoptes.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Job;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.Scoring;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.store.WorkerEventCount;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Reads what a result database holds about its runs: into {@link RunData}, every answer held, for
 * the export and the report, which show every answer; or into {@link RunStats} as the answers
 * stream from the store, none held ({@link #stats}), for the coordinator's summary, its budget,
 * {@code runs} and {@code runs show}. One path from the store, so all of them see the same rows.
 *
 * <p>Records stored before runs were noted (schema version 1) belong to the run named by their
 * job id and show as model {@value #UNNAMED_MODEL} when their run named no model.
 */
public final class RunDataLoader {
    /** What a record of a run that named no model shows as its model. */
    public static final String UNNAMED_MODEL = "(not named by the run)";
    /** The run of records stored without one (through the library, without their job). */
    public static final String NO_RUN = "(none)";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, Object>> MAP = new TypeReference<>() {
    };

    private RunDataLoader() {
    }

    /**
     * The ids of the runs the store holds: those noted by the coordinator, most recent first,
     * then any others its records name.
     */
    public static List<String> runIds(JdbcResultStore store) {
        Set<String> ids = new LinkedHashSet<>();
        for (RunEntry run : store.runs()) {
            ids.add(run.runId());
        }
        boolean[] orphans = {false};
        store.forEachRecord(r -> {
            if (r.context().runId() != null) {
                ids.add(r.context().runId());
            } else {
                orphans[0] = true;
            }
        });
        if (orphans[0]) {
            ids.add(NO_RUN);
        }
        store.forEachFailure(f -> {
            if (f.runId() != null) {
                ids.add(f.runId());
            }
        });
        return new ArrayList<>(ids);
    }

    /**
     * Everything about one run, with the scores of its latest scoring.
     *
     * @throws IllegalArgumentException when the store holds nothing about {@code runId}
     */
    public static RunData load(JdbcResultStore store, String runId) {
        return load(store, runId, 0);
    }

    /**
     * Everything about one run, with the scores of scoring {@code scoringNumber} (0: the latest).
     *
     * @throws IllegalArgumentException when the store holds nothing about {@code runId}, or the
     *                                  run has no such scoring (the message names those it has)
     */
    public static RunData load(JdbcResultStore store, String runId, int scoringNumber) {
        Header header = header(store, runId, scoringNumber);
        List<SampleRow> samples = new ArrayList<>();
        List<String> scoredBy = eachSample(store, header, false, true, samples::add);
        return new RunData(header.info, samples, header.failures, header.events, scoredBy);
    }

    /**
     * The statistics of one run, with the scores of scoring {@code scoringNumber} (0: the latest),
     * computed from its answers as they are read from the store, none of them held
     * ({@link RunTally}: what is kept grows with the run's vignettes, not its answers). The
     * figures are those {@link RunStats#of(RunData, String)} gives for {@link #load}'s rows, but
     * for the per-worker table, which is empty. For the coordinator's summary at the end of a run,
     * its budget when it resumes, {@code runs} and {@code runs show}.
     *
     * @param groupBy a metadata key to break the figures down by; null or blank for the key the
     *                run was made with ({@link RunStats#groupByOf})
     * @param also    given each answer too, after the figures count it (only what the figures
     *                read: no prompt, response of text or explanation); null for nothing
     * @throws IllegalArgumentException as {@link #load(JdbcResultStore, String, int)} does
     */
    public static RunStats stats(JdbcResultStore store, String runId, int scoringNumber, String groupBy,
                                 Consumer<SampleRow> also) {
        Header header = header(store, runId, scoringNumber);
        RunTally tally = new RunTally(RunStats.groupByOf(header.info, groupBy));
        List<String> scoredBy = eachSample(store, header, true, tally.groupBy() != null, row -> {
            tally.add(row);
            if (also != null) {
                also.accept(row);
            }
        });
        return tally.stats(header.info, header.failures, scoredBy, List.of());
    }

    /**
     * The statistics of one run from a tally already given its answers ({@link LiveFigures}: as
     * they were stored), with what else the store knows of the run (its header, failed jobs,
     * scorings) read now; the figures {@link #stats(JdbcResultStore, String, int, String, Consumer)}
     * gives when the tally was given the answers it would read, in scoring {@code scoringNumber}.
     *
     * @param scorers the scorers that scored the answers tallied
     * @return the statistics, or null when the run's group-by key is not the tally's (the caller
     *         then reads the answers back)
     * @throws IllegalArgumentException as {@link #load(JdbcResultStore, String, int)} does
     */
    public static RunStats stats(JdbcResultStore store, String runId, int scoringNumber, String groupBy,
                                 RunTally tally, Collection<String> scorers) {
        Header header = header(store, runId, scoringNumber);
        String resolved = RunStats.groupByOf(header.info, groupBy);
        if (!java.util.Objects.equals(resolved, tally.groupBy())) {
            return null;
        }
        return tally.stats(header.info, header.failures, scoredBy(header, new TreeSet<>(scorers)), List.of());
    }

    /** What is known of a run besides its answers. */
    private record Header(String runId, RunEntry entry, int scoring, RunInfo info, List<FailureRow> failures,
                          List<WorkerEvents> events) {
    }

    private static Header header(JdbcResultStore store, String runId, int scoringNumber) {
        List<Scoring> scorings = NO_RUN.equals(runId) ? List.of() : store.scorings(runId);
        Scoring shown = scorings.isEmpty() ? null : scorings.get(scorings.size() - 1);
        if (scoringNumber > 0) {
            shown = null;
            for (Scoring s : scorings) {
                if (s.number() == scoringNumber) {
                    shown = s;
                }
            }
            if (shown == null) {
                throw new IllegalArgumentException("run " + runId + " has no scoring " + scoringNumber + "; "
                        + describe(scorings));
            }
        }
        RunEntry entry = null;
        for (RunEntry run : store.runs()) {
            if (run.runId().equals(runId)) {
                entry = run;
            }
        }
        List<FailureRow> failures = new ArrayList<>();
        store.forEachFailure(f -> {
            if (runId.equals(f.runId())) {
                failures.add(new FailureRow(runId, f.jobId().value(), f.model() == null ? UNNAMED_MODEL : f.model(),
                        f.reason(), f.attempts()));
            }
        });
        List<WorkerEvents> events = new ArrayList<>();
        for (WorkerEventCount e : store.workerEvents(runId)) {
            events.add(new WorkerEvents(runId, e.workerId(), e.failures(), e.quarantines()));
        }
        String scorer = shown != null ? shown.scorer() : entry == null ? null : entry.scorer();
        RunInfo info = entry == null
                ? new RunInfo(runId, null, List.of(), scorer, 1, null, 0, null, null, shown, scorings)
                : new RunInfo(runId, entry.suite(), entry.models(), scorer, entry.epochs(), entry.startedAt(),
                        entry.vignettes(), entry.manifest(), entry.finishedAt(), shown, scorings, entry.sittings());
        return new Header(runId, entry, shown == null ? 0 : shown.number(), info, failures, events);
    }

    /**
     * Gives each answer of the run to {@code action}, in storage order, read from the store's
     * cursor; returns the scorers that scored them, the run's own first.
     *
     * @throws IllegalArgumentException when the store holds nothing about the run
     */
    private static List<String> eachSample(JdbcResultStore store, Header header, boolean figuresOnly,
                                           boolean metadata, Consumer<SampleRow> action) {
        String runId = header.runId;
        long[] count = {0};
        // The scorers that scored the answers: a vignette's sandbox check or its own scorer
        // overrides the run's, and the accuracy heading names what scored, not what was asked.
        Set<String> scorers = new TreeSet<>();
        if (NO_RUN.equals(runId)) {
            store.forEachRecord(null, r -> {
                if (r.context().runId() == null) {
                    count[0]++;
                    action.accept(sample(runId, r, figuresOnly, metadata));
                }
            });
        } else {
            Consumer<StoredRecord> add = r -> {
                count[0]++;
                action.accept(sample(runId, r, figuresOnly, metadata));
                if (r.score() != null && r.score().score() != null && r.score().scorer() != null) {
                    scorers.add(r.score().scorer());
                }
            };
            if (figuresOnly) {
                store.forEachRecordWithoutTexts(runId, header.scoring, add);
            } else {
                store.forEachRecord(runId, header.scoring, add);
            }
        }
        if (header.entry == null && count[0] == 0 && header.failures.isEmpty()) {
            throw new IllegalArgumentException("the database holds no run '" + runId + "'");
        }
        return scoredBy(header, scorers);
    }

    /** The scorers that scored a run's answers, the run's own first. */
    private static List<String> scoredBy(Header header, Set<String> scorers) {
        String scorer = header.info.scorer();
        List<String> scoredBy = new ArrayList<>();
        if (scorers.remove(scorer)) {
            scoredBy.add(scorer);
        }
        scoredBy.addAll(scorers);
        return scoredBy;
    }

    /** "it has scorings 1 (exact, run, ...), 2 (...)", or "it has none", for messages. */
    public static String describe(List<Scoring> scorings) {
        if (scorings.isEmpty()) {
            return "it has none (it was never scored)";
        }
        List<String> each = new ArrayList<>();
        for (Scoring s : scorings) {
            each.add(s.number() + " (" + s.scorer() + ", " + s.origin() + ", " + s.createdAt() + ")");
        }
        return "it has " + (scorings.size() == 1 ? "scoring " : "scorings ") + String.join(", ", each);
    }

    /** How an answer asked by log-likelihood begins (its JSON's first key), as the store's figures query sees it. */
    private static final String CHOICE_ANSWER = "{\"resps\":";

    /**
     * The row {@link #stats} reads back for an answer stored now, made from what was stored
     * instead ({@link LiveFigures}): field for field what {@link #sample} makes of the store's row
     * without texts (the store's {@code RecordRows.SELECT_FIGURES}), so that both count the same.
     *
     * @param job        the job it answers
     * @param record     the answer as stored
     * @param v          its vignette, or null when unknown (nothing of it was stored then)
     * @param score      the score stored with it, or null for none
     * @param cachedFrom the run it was copied from (served from the cache), or null
     * @param metadata   whether a figure reads the metadata (a group-by key)
     */
    static SampleRow figuresRow(String runId, Job job, ResponseRecord record, Vignette v, ScoreEntry score,
                                String cachedFrom, boolean metadata) {
        String response = record.response();
        boolean choice = response != null && response.startsWith(CHOICE_ANSWER);
        String expected = v != null && (record.error() != null || choice) ? v.expected() : null;
        Map<String, Object> meta = Map.of();
        if (metadata && v != null && !v.metadata().isEmpty()) {
            try {
                // As stored and read back: the JSON the store wrote, parsed as the reader parses it.
                meta = metadata(JSON.writeValueAsString(v.metadata()));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("stored metadata that is not JSON: " + e.getOriginalMessage(), e);
            }
        }
        return new SampleRow(runId, job.model() == null ? UNNAMED_MODEL : job.model(), job.epoch(),
                v != null ? v.id() : record.vignetteId(), null, null, expected, choice ? response : null,
                score == null || score.scorer() == null ? null : score.score(), null, meta, null, null,
                record.latencyMs(), record.usage() == null ? null : record.usage().promptTokens(),
                record.usage() == null ? null : record.usage().completionTokens(), null, record.error(), cachedFrom);
    }

    private static SampleRow sample(String runId, StoredRecord r, boolean figuresOnly, boolean metadata) {
        ResponseRecord record = r.record();
        var c = r.context();
        var score = r.score();
        if (figuresOnly) {
            // The expected answer and response are there only for answers asked by log-likelihood
            // (and the expected answer of a failed one): the multiple-choice figures read them.
            // The metadata only when a figure is broken down by it: parsing it is the most a row costs.
            return new SampleRow(runId, c.model() == null ? UNNAMED_MODEL : c.model(), c.epoch(), record.vignetteId(),
                    null, null, c.expected(), record.response() == null || record.response().isEmpty() ? null
                    : record.response(), score == null ? null : score.score(), null,
                    metadata ? metadata(c.metadataJson()) : Map.of(),
                    null, null, record.latencyMs(),
                    record.usage() == null ? null : record.usage().promptTokens(),
                    record.usage() == null ? null : record.usage().completionTokens(), null, record.error(),
                    r.cachedFrom());
        }
        return new SampleRow(runId, c.model() == null ? UNNAMED_MODEL : c.model(), c.epoch(), record.vignetteId(),
                r.jobId().value(), c.prompt(), c.expected(), record.response(),
                score == null ? null : score.score(), score == null ? null : score.explanation(),
                metadata(c.metadataJson()), r.workerId(), record.model(), record.latencyMs(),
                record.usage() == null ? null : record.usage().promptTokens(),
                record.usage() == null ? null : record.usage().completionTokens(), record.finishReason(),
                record.error(), r.cachedFrom(), record.transcript());
    }

    private static Map<String, Object> metadata(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, MAP);
        } catch (JsonProcessingException e) {
            // Written by this code as JSON; a hand-edited database is shown without it, not refused.
            return Map.of();
        }
    }
}

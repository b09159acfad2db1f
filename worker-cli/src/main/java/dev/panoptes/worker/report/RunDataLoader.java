package dev.panoptes.worker.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.store.WorkerEventCount;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads what a result database holds about its runs into {@link RunData}: the one path from the
 * store to the summary, the export and the report, so that all three see the same rows.
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
     * Everything about one run.
     *
     * @throws IllegalArgumentException when the store holds nothing about {@code runId}
     */
    public static RunData load(JdbcResultStore store, String runId) {
        RunEntry entry = null;
        for (RunEntry run : store.runs()) {
            if (run.runId().equals(runId)) {
                entry = run;
            }
        }
        List<SampleRow> samples = new ArrayList<>();
        if (NO_RUN.equals(runId)) {
            store.forEachRecord(null, r -> {
                if (r.context().runId() == null) {
                    samples.add(sample(runId, r));
                }
            });
        } else {
            store.forEachRecord(runId, r -> samples.add(sample(runId, r)));
        }
        List<FailureRow> failures = new ArrayList<>();
        store.forEachFailure(f -> {
            if (runId.equals(f.runId())) {
                failures.add(new FailureRow(runId, f.jobId().value(), f.model() == null ? UNNAMED_MODEL : f.model(),
                        f.reason(), f.attempts()));
            }
        });
        if (entry == null && samples.isEmpty() && failures.isEmpty()) {
            throw new IllegalArgumentException("the database holds no run '" + runId + "'");
        }
        List<WorkerEvents> events = new ArrayList<>();
        for (WorkerEventCount e : store.workerEvents(runId)) {
            events.add(new WorkerEvents(runId, e.workerId(), e.failures(), e.quarantines()));
        }
        RunInfo info = entry == null
                ? new RunInfo(runId, null, List.of(), null, 1, null, 0)
                : new RunInfo(runId, entry.suite(), entry.models(), entry.scorer(), entry.epochs(), entry.startedAt(),
                        entry.vignettes());
        return new RunData(info, samples, failures, events);
    }

    private static SampleRow sample(String runId, StoredRecord r) {
        ResponseRecord record = r.record();
        var c = r.context();
        var score = r.score();
        return new SampleRow(runId, c.model() == null ? UNNAMED_MODEL : c.model(), c.epoch(), record.vignetteId(),
                r.jobId().value(), c.prompt(), c.expected(), record.response(),
                score == null ? null : score.score(), score == null ? null : score.explanation(),
                metadata(c.metadataJson()), r.workerId(), record.model(), record.latencyMs(),
                record.usage() == null ? null : record.usage().promptTokens(),
                record.usage() == null ? null : record.usage().completionTokens(), record.finishReason(),
                record.error());
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

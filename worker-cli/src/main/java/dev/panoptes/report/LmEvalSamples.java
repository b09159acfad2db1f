package dev.panoptes.report;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The lines of an lm-evaluation-harness {@code samples_<task>_<date>.jsonl} file for one model's
 * answers ({@link LmEvalExport} writes them): one line per vignette, in document order, with
 * lm-eval's fields ({@code doc_id}, {@code doc}, {@code target}, {@code arguments},
 * {@code resps}, {@code filtered_resps}, {@code filter}, {@code metrics}, the three hashes, the
 * metric's value) and what Panoptes knows besides under {@code panoptes}.
 *
 * <p>Epochs are lm-eval's {@code repeats}: lm-eval sends a document's one request
 * {@code repeats} times and logs one line per document whose {@code resps} holds, per request,
 * the list of its repeats ({@code evaluator.py}: {@code "resps": [req.resps for req in
 * requests]}). So a vignette's answers are one line, {@code resps} {@code [[epoch 0, epoch 1,
 * ...]]} in epoch order. Panoptes scores every repeat, so {@code filtered_resps} keeps them all
 * (lm-eval's {@code take_first_k} with k the repeats; with one repeat it is lm-eval's default
 * {@code take_first}, the one answer) and {@code acc} is the mean of the repeats' figure scores
 * (null when none is scored); each repeat's own grade and call are under
 * {@code panoptes.repeats}.
 *
 * <p>A model asked by log-likelihood (multiple choice) has lm-eval's multiple-choice lines
 * instead: a request per choice in {@code arguments}, {@code [loglikelihood, is_greedy]} per
 * choice in {@code resps}, and {@code acc} and {@code acc_norm} ({@link LmEvalChoiceLines}); one
 * asked a loglikelihood task's continuations has lm-eval's loglikelihood lines: one request,
 * {@code [[ll, is_greedy]]}, the continuation as {@code target}, and {@code perplexity} (the
 * document's ll) and {@code acc} (is_greedy) ({@link LmEvalContinuationLines}).
 *
 * <p>The hashes are lm-eval's: SHA-256 (hex) of the document as Python's
 * {@code json.dumps(doc, indent=2, ensure_ascii=False)} writes it ({@link PythonJson}), of the
 * prompt, and of the target as a string. Stateless and thread-safe.
 */
final class LmEvalSamples {
    /** How a model's answers were asked, which decides the lines' lm-eval output type. */
    enum Shape {
        /** Text answers: lm-eval's generate_until lines. */
        GENERATION,
        /** Log-likelihoods of several choices: multiple_choice lines. */
        MULTIPLE_CHOICE,
        /** Log-likelihoods of one continuation: loglikelihood lines. */
        LOGLIKELIHOOD
    }

    private LmEvalSamples() {
    }

    /**
     * Each vignette's {@code doc_id}: its place among the run's vignettes, as the stored answers
     * show it. Jobs take consecutive slices of the suite ({@code <run>-<model>-e<epoch>-<index>})
     * and store their answers in slice order, so vignettes are ordered by the lowest job index
     * they were asked in, then by first appearance; rows without a job id come last, in storage
     * order.
     */
    static Map<String, Integer> docIds(List<SampleRow> rows) {
        Map<String, long[]> firstSeen = new LinkedHashMap<>();
        for (int i = 0; i < rows.size(); i++) {
            SampleRow row = rows.get(i);
            long job = jobIndex(row.jobId());
            long[] seen = firstSeen.get(row.vignetteId());
            if (seen == null) {
                firstSeen.put(row.vignetteId(), new long[]{job, i});
            } else if (job < seen[0]) {
                seen[0] = job;
                seen[1] = i;
            }
        }
        List<Map.Entry<String, long[]>> order = new ArrayList<>(firstSeen.entrySet());
        order.sort(Comparator.comparingLong((Map.Entry<String, long[]> e) -> e.getValue()[0])
                .thenComparingLong(e -> e.getValue()[1]));
        Map<String, Integer> ids = new HashMap<>();
        for (Map.Entry<String, long[]> e : order) {
            ids.put(e.getKey(), ids.size());
        }
        return ids;
    }

    /**
     * The lines of one model's answers: one per vignette, its epochs as repeats.
     *
     * @param rows      the model's answers
     * @param docIds    {@link #docIds} over the whole run, so that a vignette has one id for every model
     * @param genKwargs the sampling parameters each request carried (lm-eval's second argument)
     * @param metric    the name the figure score is written under ({@link LmEvalExport#metricOf})
     * @param shape     how the model was asked, which decides the lines' shape
     */
    static List<Map<String, Object>> lines(List<SampleRow> rows, Map<String, Integer> docIds,
                                           Map<String, Object> genKwargs, String metric, Shape shape) {
        Map<Integer, List<SampleRow>> byDoc = new TreeMap<>();
        for (SampleRow row : rows) {
            byDoc.computeIfAbsent(docIds.get(row.vignetteId()), id -> new ArrayList<>()).add(row);
        }
        List<Map<String, Object>> lines = new ArrayList<>(byDoc.size());
        for (Map.Entry<Integer, List<SampleRow>> doc : byDoc.entrySet()) {
            List<SampleRow> repeats = doc.getValue();
            repeats.sort(Comparator.comparingInt(SampleRow::epoch));
            lines.add(line(repeats, doc.getKey(), genKwargs, metric, shape));
        }
        return lines;
    }

    /** lm-eval's {@code task_hashes} entry: the hash of every line's three hashes, concatenated in file order. */
    static String taskHash(List<Map<String, Object>> lines) {
        StringBuilder all = new StringBuilder();
        for (Map<String, Object> line : lines) {
            all.append(line.get("doc_hash")).append(line.get("prompt_hash")).append(line.get("target_hash"));
        }
        return sha256(all.toString());
    }

    /** lm-eval's {@code hash_string}: SHA-256 of the UTF-8 bytes, as lower-case hex. */
    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** The line of one vignette; {@code repeats} its answers in epoch order, at least one. */
    private static Map<String, Object> line(List<SampleRow> repeats, int docId, Map<String, Object> genKwargs,
                                            String metric, Shape shape) {
        SampleRow row = repeats.get(0);
        String prompt = row.prompt() == null ? "" : row.prompt();
        // lm-eval writes str(target); a vignette without an expected answer has the empty target.
        String expected = row.expected() == null ? "" : row.expected();
        // A loglikelihood document's target is its doc_to_target, the continuation, not the choice index.
        String target = shape == Shape.LOGLIKELIHOOD ? LmEvalContinuationLines.target(repeats, expected) : expected;
        List<String> responses = new ArrayList<>(repeats.size());
        double sum = 0;
        int scored = 0;
        List<Map<String, Object>> facts = new ArrayList<>(repeats.size());
        for (SampleRow repeat : repeats) {
            responses.add(repeat.response() == null ? "" : repeat.response());
            if (repeat.figureScore() != null) {
                sum += repeat.figureScore();
                scored++;
            }
            facts.add(panoptes(repeat));
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("id", row.vignetteId());
        doc.put("prompt", row.prompt());
        doc.put("expected", row.expected());
        // Sorted: the metadata map's own order is not stable from one JVM to the next, the hash must be.
        doc.put("metadata", new TreeMap<>(row.metadata()));
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("arg_0", prompt);
        args.put("arg_1", genKwargs);
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("doc_id", docId);
        line.put("doc", doc);
        line.put("target", target);
        Map<String, Object> metricValues = new LinkedHashMap<>();
        if (shape != Shape.GENERATION) {
            Map<String, Object> filled = new LinkedHashMap<>();
            List<String> metrics;
            if (shape == Shape.LOGLIKELIHOOD) {
                LmEvalContinuationLines.fill(filled, repeats, prompt);
                metrics = LmEvalContinuationLines.METRICS;
            } else {
                LmEvalChoiceLines.fill(filled, repeats, prompt);
                metrics = LmEvalChoiceLines.METRICS;
            }
            for (String choiceMetric : metrics) {
                metricValues.put(choiceMetric, filled.remove(choiceMetric));
            }
            line.putAll(filled);
        } else {
            line.put("arguments", Map.of("gen_args_0", args));
            line.put("resps", List.of(responses));
            line.put("filtered_resps", responses.size() == 1 ? responses : List.of(responses));
            line.put("filter", LmEvalExport.FILTER);
            line.put("metrics", List.of(metric));
            metricValues.put(metric, scored == 0 ? null : sum / scored);
        }
        line.put("doc_hash", sha256(PythonJson.dumps(doc)));
        line.put("prompt_hash", sha256(prompt));
        line.put("target_hash", sha256(target));
        line.putAll(metricValues);
        Map<String, Object> panoptes = new LinkedHashMap<>();
        panoptes.put("vignette_id", row.vignetteId());
        panoptes.put("repeats", facts);
        line.put("panoptes", panoptes);
        return line;
    }

    /** What lm-eval has no field for, per repeat: the epoch, the grade and its explanation, the call's facts, a failure. */
    private static Map<String, Object> panoptes(SampleRow row) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("epoch", row.epoch());
        p.put("score", row.score());
        p.put("explanation", row.explanation());
        p.put("error", row.error());
        p.put("job_id", row.jobId());
        p.put("worker_id", row.workerId());
        p.put("api_model", row.apiModel());
        p.put("finish_reason", row.finishReason());
        p.put("latency_ms", row.latencyMs());
        p.put("prompt_tokens", row.promptTokens());
        p.put("completion_tokens", row.completionTokens());
        if (row.cached()) {
            // Served by the response cache: the answer of an earlier run, no model call in this one.
            p.put("cached", true);
            p.put("cached_from", row.cachedFrom());
        }
        return p;
    }

    /** The number after a job id's last '-' ({@code <run>-<model>-e<epoch>-<index>}); MAX_VALUE when there is none. */
    private static long jobIndex(String jobId) {
        if (jobId == null) {
            return Long.MAX_VALUE;
        }
        String tail = jobId.substring(jobId.lastIndexOf('-') + 1);
        try {
            return Long.parseLong(tail);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}

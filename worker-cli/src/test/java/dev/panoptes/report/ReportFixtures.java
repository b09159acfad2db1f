package dev.panoptes.report;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A small run whose every figure can be checked by hand, shared by the report tests.
 *
 * <p>Run r-1 asks models m-a and m-b three vignettes in two epochs; a third model, m-c, which
 * the run did not list, left one unscored sample. Epochs are numbered from 0, as a run stores
 * them. Scores (epoch 0, epoch 1):
 * <pre>
 *          v1 (geo)   v2 (geo)   v3 (no topic)   mean
 *   m-a    1, 1       1, 0       0, 0            3/6 = 0.500
 *   m-b    1, 1       1, 1       1, 0            5/6 = 0.833
 * </pre>
 * Cluster-robust SEs (G clusters, n samples, S_g residual sums): m-a: S = (1, 0, -1),
 * SE = sqrt(3/2 * 2) / 6 = 0.2887; m-b: S = (1/3, 1/3, -2/3), SE = sqrt(3/2 * 2/3) / 6 = 1/6.
 * Paired comparison m-b vs m-a: d = (0, 0.5, 0.5), mean 1/3, sd = sqrt(1/12), SE = 1/6.
 *
 * <p>Workers: w-1 ran m-a (latencies 100..600 ms), w-2 ran m-b (50, 10, 40, 30, 20 ms and one
 * unknown), m-c's sample names no worker, and w-3 has only events. Each model-a and model-b
 * sample used 10 prompt and 2 completion tokens, except m-b's last, which reported none.
 *
 * <p>Hostile text: m-b's v2 epoch-0 response tries to close the data script and set the page
 * title; its explanation opens an HTML comment and a script; a prompt holds an image tag with
 * an onerror handler and a U+2028. Only the five v1 samples contain "paris".
 */
final class ReportFixtures {
    static final String RUN = "r-1";
    static final String HOSTILE_RESPONSE = "</script><script>document.title='pwned'</script>";
    static final String HOSTILE_EXPLANATION = "<!--<script>";
    static final String HOSTILE_PROMPT = "What is 2+2? <img src=x onerror=\"document.title='img'\">\u2028Think.";
    static final Instant STARTED = Instant.parse("2025-05-01T10:00:00Z");

    private ReportFixtures() {
    }

    static RunData run() {
        RunInfo info = new RunInfo(RUN, "capitals & <sums>", List.of("m-a", "m-b"), "exact", 2, STARTED, 3);
        List<SampleRow> samples = new ArrayList<>();
        double[][] a = {{1, 1}, {1, 0}, {0, 0}};
        double[][] b = {{1, 1}, {1, 1}, {1, 0}};
        long[] latenciesA = {100, 200, 300, 400, 500, 600};
        Long[] latenciesB = {50L, 10L, 40L, 30L, 20L, null};
        for (int v = 0; v < 3; v++) {
            for (int e = 0; e < 2; e++) {
                samples.add(sample("m-a", v, e, a[v][e], "w-1", latenciesA[v * 2 + e], 10L, 2L,
                        "answer " + v + "." + e, "graded"));
            }
        }
        for (int v = 0; v < 3; v++) {
            for (int e = 0; e < 2; e++) {
                boolean last = v == 2 && e == 1;
                boolean hostile = v == 1 && e == 0;
                samples.add(sample("m-b", v, e, b[v][e], "w-2", latenciesB[v * 2 + e], last ? null : 10L,
                        last ? null : 2L, hostile ? HOSTILE_RESPONSE : "reply " + v + "." + e,
                        hostile ? HOSTILE_EXPLANATION : "graded"));
            }
        }
        samples.add(new SampleRow(RUN, "m-c", 0, "v1", "j-m-c-v1-1", prompt(0), "Paris", "Lyon", null, null,
                Map.of("topic", "geo"), null, "m-c-2025", null, null, null, "stop"));
        List<FailureRow> failures = List.of(new FailureRow(RUN, "j-m-a-v9-1", "m-a", "timed out after 30000 ms", 3));
        List<WorkerEvents> events = List.of(new WorkerEvents(RUN, "w-2", 2, 1), new WorkerEvents(RUN, "w-3", 1, 1));
        return new RunData(info, samples, failures, events);
    }

    /** A model API's error as it is stored: long, with a run of characters no space breaks. */
    static final String LONG_ERROR = "the model API answered HTTP 500 after 3 attempts: {\"error\":{\"message\":"
            + "\"CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\",\"type\":"
            + "\"server_error\",\"trace\":\"" + "0123456789abcdef".repeat(8) + "\"}}";
    /** The run an answer served from the response cache copies. */
    static final String CACHED_FROM = "e59662dae82fbe62";

    /**
     * A run of one model whose samples have long prompts and answers, failed answers with
     * {@link #LONG_ERROR} and answers served from the cache: the widest cells a samples table gets.
     */
    static RunData runWithLongCells() {
        RunInfo info = new RunInfo("0123456789abcdef", "long.jsonl", List.of("model-with-a-long-name-v2"), "exact",
                1, STARTED, 6);
        List<SampleRow> samples = new ArrayList<>();
        String prompt = "Read the passage and answer in one word. " + "The quick brown fox jumps over the lazy dog. "
                .repeat(12);
        String response = "Having considered the passage at length, the answer is: fox. " .repeat(6);
        for (int v = 0; v < 6; v++) {
            boolean failed = v % 2 == 0;
            samples.add(new SampleRow(info.runId(), "model-with-a-long-name-v2", 0, "vignette-" + v,
                    "0123456789abcdef-m-e0-000" + v, prompt, "fox", failed ? "" : response, failed ? 0.0 : 1.0,
                    failed ? null : "normalized match of the expected answer", Map.of("topic", "reading"), "w-1",
                    "model-with-a-long-name-v2", 120L, 300L, 40L, "stop", failed ? LONG_ERROR : null,
                    failed ? null : CACHED_FROM));
        }
        return new RunData(info, samples, List.of(), List.of());
    }

    private static SampleRow sample(String model, int v, int e, double score, String worker, Long latencyMs,
                                    Long promptTokens, Long completionTokens, String response, String explanation) {
        String vignette = "v" + (v + 1);
        Map<String, Object> metadata = v < 2 ? Map.of("topic", "geo") : Map.of("level", 3);
        return new SampleRow(RUN, model, e, vignette, "j-" + model + "-" + vignette + "-" + (e + 1), prompt(v),
                expected(v), response, score, explanation, metadata, worker, model + "-2025", latencyMs,
                promptTokens, completionTokens, "stop");
    }

    private static String prompt(int v) {
        return switch (v) {
            case 0 -> "user: What is the capital of France?";
            case 1 -> HOSTILE_PROMPT;
            default -> "Name a prime above 10.";
        };
    }

    private static String expected(int v) {
        return switch (v) {
            case 0 -> "Paris";
            case 1 -> "4";
            default -> "11";
        };
    }
}

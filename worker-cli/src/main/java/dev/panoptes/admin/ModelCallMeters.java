package dev.panoptes.admin;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Model calls as the records of an outcome tell them (each {@link ResponseRecord} carries its
 * call's latency and token usage), labelled by the model the job asked for: a bounded set, the
 * run's {@code --model}s. Shared by the coordinator, which sees the records it stores, and the
 * worker, which sees the ones it sends.
 *
 * <ul>
 *   <li>{@code panoptes_model_call_seconds} (histogram; model): latency of one model call (the
 *       record's; a sandboxed sample's record carries its whole run, turns and tools included);</li>
 *   <li>{@code panoptes_model_tokens_total} (counter; model, kind=prompt|completion).</li>
 * </ul>
 * Thread-safe.
 */
public final class ModelCallMeters {
    /** The label of jobs that name no model (the worker's default). */
    static final String UNNAMED = "unnamed";
    /** Buckets for a model call: from a cached answer to a long generation. */
    private static final Duration[] CALL_BUCKETS = {
        Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
        Duration.ofSeconds(60), Duration.ofSeconds(120)
    };

    private final MeterRegistry registry;

    public ModelCallMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Records every call of the outcome that carries a latency, and every one that carries usage. */
    public void record(Job job, JobOutcome outcome) {
        String model = job.model() == null ? UNNAMED : job.model();
        Timer latency = null;
        Counter prompt = null;
        Counter completion = null;
        for (ResponseRecord r : outcome.records()) {
            if (r.latencyMs() != null) {
                if (latency == null) {
                    latency = Timer.builder("panoptes.model.call")
                            .description("Latency of one model call, as the worker measured it")
                            .tag("model", model)
                            .serviceLevelObjectives(CALL_BUCKETS)
                            .register(registry);
                }
                latency.record(r.latencyMs(), TimeUnit.MILLISECONDS);
            }
            if (r.usage() != null) {
                if (prompt == null) {
                    prompt = tokens(model, "prompt");
                    completion = tokens(model, "completion");
                }
                prompt.increment(r.usage().promptTokens());
                completion.increment(r.usage().completionTokens());
            }
        }
    }

    private Counter tokens(String model, String kind) {
        return Counter.builder("panoptes.model.tokens")
                .description("Tokens of model calls, as the model API reported them")
                .tags("model", model, "kind", kind)
                .register(registry);
    }
}

package dev.panoptes.admin;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@link AsyncJobRunner} that measures the one it wraps: jobs running, completed and failed
 * (by scope), the model calls and tokens of every outcome, and the model API's 429s.
 *
 * <p>The stage it returns completes only once the outcome is measured, so that whoever acts on
 * it (the session, which sends the answer to the coordinator) acts after the figures moved: a
 * scrape that follows the coordinator's receipt of an answer counts it. Callbacks on one shared
 * stage would run in no promised order, and the answer could be sent, and the run end, before
 * the latency was recorded. Cancelling the returned stage cancels the wrapped runner's, so that
 * the session's cancel still reaches the job. The measuring runs on the thread that completes the
 * job, and blocks on nothing.
 *
 * <ul>
 *   <li>{@code panoptes_worker_jobs_running} (gauge)</li>
 *   <li>{@code panoptes_worker_jobs_completed_total} (counter)</li>
 *   <li>{@code panoptes_worker_jobs_failed_total} (counter; scope=job|worker|transient|cancelled)</li>
 *   <li>{@code panoptes_worker_model_api_throttled_total} (counter): HTTP 429 answers, retried
 *       requests included</li>
 *   <li>{@code panoptes_model_call_seconds}, {@code panoptes_model_tokens_total}: see {@link ModelCallMeters}</li>
 * </ul>
 */
public final class MeasuringJobRunner implements AsyncJobRunner {
    private static final String P = "panoptes.worker.";

    private final AsyncJobRunner runner;
    private final MeterRegistry registry;
    private final ModelCallMeters modelCalls;
    private final AtomicInteger running = new AtomicInteger();
    private final Counter completed;

    public MeasuringJobRunner(AsyncJobRunner runner, MeterRegistry registry) {
        this.runner = runner;
        this.registry = registry;
        this.modelCalls = new ModelCallMeters(registry);
        Gauge.builder(P + "jobs.running", running, AtomicInteger::get).description("Jobs running now")
                .register(registry);
        completed = Counter.builder(P + "jobs.completed").description("Jobs answered with a result")
                .register(registry);
        for (String scope : List.of("job", "worker", "transient", "cancelled")) {
            failed(scope);
        }
        FunctionCounter.builder(P + "model.api.throttled", runner, AsyncJobRunner::throttledCount)
                .description("HTTP 429 answers of the model API, retried requests included").register(registry);
    }

    /**
     * Starts the job on the wrapped runner.
     *
     * @return a stage that completes as the wrapped runner's does, after the outcome is measured;
     *         cancelling it cancels the wrapped runner's
     * @throws RuntimeException whatever the wrapped runner throws (counted as a failure)
     */
    @Override
    public CompletionStage<JobOutcome> start(Job job) {
        running.incrementAndGet();
        CompletableFuture<JobOutcome> inner;
        try {
            inner = runner.start(job).toCompletableFuture();
        } catch (RuntimeException e) {
            running.decrementAndGet();
            failed(scopeOf(e)).increment();
            throw e;
        }
        CompletableFuture<JobOutcome> measured = new CompletableFuture<>();
        measured.whenComplete((outcome, error) -> {
            if (measured.isCancelled()) {
                inner.cancel(true);
            }
        });
        inner.whenComplete((outcome, error) -> {
            running.decrementAndGet();
            if (error == null) {
                completed.increment();
                modelCalls.record(job, outcome);
                measured.complete(outcome);
            } else {
                failed(scopeOf(error)).increment();
                measured.completeExceptionally(error);
            }
        });
        return measured;
    }

    /** The wrapped runner's count: the session reports it to the coordinator. */
    @Override
    public long throttledCount() {
        return runner.throttledCount();
    }

    private Counter failed(String scope) {
        return Counter.builder(P + "jobs.failed").description("Jobs that failed on this worker, by whose failure")
                .tag("scope", scope).register(registry);
    }

    static String scopeOf(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof CancellationException) {
            return "cancelled";
        }
        if (cause instanceof ControlException ce) {
            return ce.scope().name().toLowerCase(Locale.ROOT);
        }
        return "transient";
    }

    @Override
    public String toString() {
        return "MeasuringJobRunner[" + runner + "]";
    }
}

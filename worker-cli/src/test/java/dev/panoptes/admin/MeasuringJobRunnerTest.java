package dev.panoptes.admin;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Usage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class MeasuringJobRunnerTest {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final CompletableFuture<JobOutcome> inner = new CompletableFuture<>();
    private final MeasuringJobRunner runner = new MeasuringJobRunner(job -> inner, registry);

    @Test
    void whoeverActsOnTheOutcomeFindsItMeasuredAlready() {
        Job job = TestJobs.job("j1", "p0", "p1");
        CompletionStage<JobOutcome> stage = runner.start(job);
        // What the session does: send the answer when the stage completes. A scrape after the
        // coordinator got the answer must count it.
        AtomicReference<String> atSend = new AtomicReference<>();
        stage.whenComplete((outcome, error) -> atSend.set("completed=" + counter("panoptes.worker.jobs.completed")
                + " calls=" + calls() + " running=" + registry.get("panoptes.worker.jobs.running").gauge().value()));

        inner.complete(new JobOutcome(job.id(), List.of(
                new ResponseRecord("v0", "a", "m", "stop", 12L, new Usage(5, 7)),
                new ResponseRecord("v1", "b", "m", "stop", 14L, new Usage(5, 7)))));

        assertThat(atSend.get()).isEqualTo("completed=1.0 calls=2 running=0.0");
    }

    @Test
    void aFailureIsCountedBeforeItIsPassedOnAsItCame() {
        CompletionStage<JobOutcome> stage = runner.start(TestJobs.job("j2", "p"));
        AtomicReference<Throwable> passedOn = new AtomicReference<>();
        AtomicReference<Double> failedAtThatTime = new AtomicReference<>();
        stage.whenComplete((outcome, error) -> {
            passedOn.set(error);
            failedAtThatTime.set(registry.get("panoptes.worker.jobs.failed").tag("scope", "job").counter().count());
        });
        dev.panoptes.control.JobFailedException why = new dev.panoptes.control.JobFailedException("no such model");

        inner.completeExceptionally(why);

        assertThat(passedOn.get()).isSameAs(why);
        assertThat(failedAtThatTime.get()).isEqualTo(1.0);
    }

    @Test
    void cancellingTheStageCancelsTheJobAndCountsIt() {
        CompletionStage<JobOutcome> stage = runner.start(TestJobs.job("j3", "p"));

        assertThat(stage.toCompletableFuture().cancel(true)).isTrue();

        assertThat(inner).isCancelled();
        assertThat(registry.get("panoptes.worker.jobs.failed").tag("scope", "cancelled").counter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("panoptes.worker.jobs.running").gauge().value()).isZero();
        assertThat(stage.toCompletableFuture()).isCompletedExceptionally();
        assertThat(stage.toCompletableFuture().isCancelled()).isTrue();
    }

    private double counter(String name) {
        Counter c = registry.find(name).counter();
        return c == null ? 0 : c.count();
    }

    private long calls() {
        Timer t = registry.find("panoptes.model.call").timer();
        return t == null ? 0 : t.count();
    }
}

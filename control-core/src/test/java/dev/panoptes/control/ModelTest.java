package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ModelTest {
    @Test
    void jobIdsAreOneTo256Characters() {
        assertThat(JobId.of("x".repeat(256)).value()).hasSize(256);
        assertThatThrownBy(() -> JobId.of("x".repeat(257))).hasMessage("job id must be at most 256 characters, got 257");
        assertThatThrownBy(() -> JobId.of("")).hasMessage("job id must not be empty");
    }

    @Test
    void aSpecNeedsVignettesWithDistinctIds() {
        assertThatThrownBy(() -> new EvalSpec("s", List.of())).hasMessage("spec 's' must have at least one vignette");
        assertThatThrownBy(() -> new EvalSpec("s", List.of(new Vignette("a", "x"), new Vignette("a", "y"))))
                .hasMessage("spec 's' has vignette id 'a' more than once");
    }

    @Test
    void vignettesNeedAPromptAndCopyTheirMetadata() {
        assertThatThrownBy(() -> new Vignette("a", "")).hasMessage("prompt of vignette 'a' must not be empty");
        Map<String, Object> metadata = new HashMap<>();
        metadata.put("k", "v");
        Vignette v = new Vignette("a", "p", null, metadata);
        metadata.put("k", "changed");
        assertThat(v.metadata()).containsEntry("k", "v");
        assertThatThrownBy(() -> v.metadata().put("x", 1)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void paramsAreRangeChecked() {
        assertThatThrownBy(() -> new SpecParams(null, 3.0, null, null)).hasMessageContaining("temperature must be between 0 and 2");
        assertThatThrownBy(() -> new SpecParams(null, null, 0, null)).hasMessageContaining("maxTokens must be at least 1");
    }

    @Test
    void anOutcomeMustAnswerEveryVignetteOfItsJobExactlyOnce() {
        Job job = TestJobs.job("j", "a", "b");
        assertThat(TestJobs.echo(job).requireAnswers(job)).isNotNull();
        assertThatThrownBy(() -> new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "x"))).requireAnswers(job))
                .hasMessage("outcome for job j has 1 of 2 records; missing vignettes [v1]");
        assertThatThrownBy(() -> new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "x"),
                new ResponseRecord("v0", "y"))).requireAnswers(job)).hasMessageContaining("vignette 'v0' more than once");
        assertThatThrownBy(() -> new JobOutcome(job.id(), List.of(new ResponseRecord("zz", "x"))).requireAnswers(job))
                .hasMessageContaining("unknown vignette 'zz'");
        assertThatThrownBy(() -> TestJobs.echo(TestJobs.job("other", "a", "b")).requireAnswers(job))
                .hasMessageContaining("does not answer job j");
        // Out of the spec's order is still a complete answer; out of order with one twice is not.
        JobOutcome swapped = new JobOutcome(job.id(), List.of(new ResponseRecord("v1", "y"), new ResponseRecord("v0", "x")));
        assertThat(swapped.requireAnswers(job)).isSameAs(swapped);
        assertThatThrownBy(() -> new JobOutcome(job.id(), List.of(new ResponseRecord("v1", "y"),
                new ResponseRecord("v1", "x"))).requireAnswers(job)).hasMessageContaining("vignette 'v1' more than once");
    }

    @Test
    void nullResponseTextBecomesEmpty() {
        assertThat(new ResponseRecord("a", null).response()).isEmpty();
    }

    @Test
    void exceptionsSayWhetherTheyAreRetryable() {
        assertThat(new WorkerException("x").isRetryable()).isTrue();
        assertThat(new JobFailedException("x").isRetryable()).isFalse();
        assertThat(new ProtocolException("x").isRetryable()).isFalse();
    }
}

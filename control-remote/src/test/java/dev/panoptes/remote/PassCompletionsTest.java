package dev.panoptes.remote;

import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Direct completions reuse two batches in turn: what a callback adds while a batch is being
 * completed goes to the other one and is completed at the next hand-over, never lost or
 * completed twice, pass after pass.
 */
class PassCompletionsTest {
    @Test
    void whatACallbackAddsIsCompletedAtTheNextHandOverPassAfterPass() {
        PassCompletions completions = new PassCompletions(r -> {
            throw new AssertionError("direct mode must not use the executor");
        }, true);
        for (int pass = 0; pass < 5; pass++) {
            List<CompletableFuture<JobOutcome>> answered = new ArrayList<>();
            List<CompletableFuture<JobOutcome>> failedByCallbacks = new ArrayList<>();
            for (int i = 0; i < 100 * (pass + 1); i++) {
                CompletableFuture<JobOutcome> f = new CompletableFuture<>();
                CompletableFuture<JobOutcome> other = new CompletableFuture<>();
                failedByCallbacks.add(other);
                f.thenRun(() -> completions.fail(other, new IllegalStateException("closed")));
                answered.add(f);
                completions.complete(f, outcome("p" + pass + "-" + i));
            }
            completions.completeIfDirect();
            assertThat(answered).allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
            assertThat(failedByCallbacks).noneMatch(CompletableFuture::isDone);
            completions.handOver(false);
            assertThat(failedByCallbacks).allMatch(CompletableFuture::isCompletedExceptionally);
            assertThat(answered.get(0).join().jobId()).isEqualTo(JobId.of("p" + pass + "-0"));
        }
    }

    private static JobOutcome outcome(String job) {
        return new JobOutcome(JobId.of(job), List.of(new ResponseRecord("v1", "4")));
    }
}

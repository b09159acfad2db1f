package dev.panoptes.remote;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A dispatch hands its {@code assign} frame over once, to be put on the wire, and keeps no
 * reference to it while its job is in flight: the frames of tens of thousands of jobs in flight
 * would otherwise be copied by every young collection.
 */
class DispatchTest {
    @Test
    void theFrameIsTakenOnceAndNotKept() {
        Job job = new Job(JobId.of("j1"), new EvalSpec("s", List.of(new Vignette("v1", "2+2?", "4", Map.of()))));
        byte[] frame = {0, 0, 0, 2, '{', '}'};
        Dispatch d = new Dispatch(job, frame, new DispatchFuture(null, job.id()));
        assertThat(d.takeFrame()).isSameAs(frame);
        assertThat(d.toString()).contains("sent=true");
        assertThatThrownBy(d::takeFrame).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("job j1").hasMessageContaining("assigned once");
        assertThat(d.job()).isSameAs(job);
    }
}

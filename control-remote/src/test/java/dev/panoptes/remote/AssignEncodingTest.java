package dev.panoptes.remote;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.control.wire.OutboundBuffer;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The write buffer on its own: partial writes, batching, growth and the frame limit. */
class AssignEncodingTest {
    private final MessageCodec codec = new MessageCodec();

    /** A channel that takes at most {@code perWrite} bytes per call, and none while closed off. */
    private static final class TrickleChannel implements WritableByteChannel {
        final ByteArrayOutputStream received = new ByteArrayOutputStream();
        int perWrite;
        int writeCalls;

        TrickleChannel(int perWrite) {
            this.perWrite = perWrite;
        }

        @Override
        public int write(ByteBuffer src) {
            writeCalls++;
            int n = Math.min(perWrite, src.remaining());
            for (int i = 0; i < n; i++) {
                received.write(src.get());
            }
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    private List<Message> decodeAll(byte[] bytes) {
        List<Message> out = new ArrayList<>();
        new dev.panoptes.control.wire.FrameDecoder(codec).feed(ByteBuffer.wrap(bytes), out::add);
        return out;
    }

    private static ServerContext context() {
        return new ServerContext(ServerOptions.builder().heartbeatInterval(Duration.ofSeconds(1)).build(), null);
    }

    @Test
    void assignFramesEncodedOnTheCallersThreadAreExactlyWhatTheCodecWouldSend() throws IOException {
        OutboundBuffer out = new OutboundBuffer();
        Job job = TestJobs.job("j1", "héllo", "wörld");

        out.appendFrame(context().encodeAssign(job, "w1"));

        TrickleChannel channel = new TrickleChannel(Integer.MAX_VALUE);
        out.writeTo(channel);
        assertThat(channel.received.toByteArray()).isEqualTo(codec.encodeFrame(new Message.Assign(job)));
    }

    @Test
    void whatTheSocketDoesNotTakeWaitsForTheNextWriteAndLeavesInOrder() throws IOException {
        OutboundBuffer out = new OutboundBuffer();
        ServerContext context = context();
        List<Job> jobs = TestJobs.jobs("p", 300);
        for (Job job : jobs.subList(0, 150)) {
            out.appendFrame(context.encodeAssign(job, "w1"));
        }
        TrickleChannel channel = new TrickleChannel(1000);
        channel.perWrite = 0;
        assertThat(out.writeTo(channel)).isZero();

        channel.perWrite = 777;
        int rounds = 0;
        int batch = 150;
        while (!out.isEmpty() || batch < 300) {
            out.writeTo(channel);
            if (batch < 300) {
                // More frames arrive while older bytes are still unsent: the buffer slides and grows.
                out.appendFrame(context.encodeAssign(jobs.get(batch++), "w1"));
            }
            rounds++;
        }

        List<Message> sent = decodeAll(channel.received.toByteArray());
        assertThat(sent).hasSize(300);
        for (int i = 0; i < 300; i++) {
            assertThat(((Message.Assign) sent.get(i)).job()).isEqualTo(jobs.get(i));
        }
        assertThat(rounds).isGreaterThan(10);
    }

    @Test
    void everyFrameQueuedBeforeAWriteLeavesInThatOneWrite() throws IOException {
        OutboundBuffer out = new OutboundBuffer();
        ServerContext context = context();
        for (Job job : TestJobs.jobs("b", 64)) {
            out.appendFrame(context.encodeAssign(job, "w1"));
        }
        out.appendFrame(context.heartbeatFrame);
        TrickleChannel channel = new TrickleChannel(Integer.MAX_VALUE);

        out.writeTo(channel);

        assertThat(channel.writeCalls).isEqualTo(1);
        assertThat(decodeAll(channel.received.toByteArray())).hasSize(65);
        assertThat(out.isEmpty()).isTrue();
    }

    @Test
    void aJobTooBigForTheFrameLimitFailsAsTheJobsOwnFailure() {
        ServerContext small = new ServerContext(ServerOptions.builder().maxFrameBytes(1024).build(), null);
        assertThat(small.encodeAssign(TestJobs.job("fits", "p"), "w1")).isNotEmpty();

        assertThatThrownBy(() -> small.encodeAssign(TestJobs.job("huge", "x".repeat(5000)), "w1"))
                .isInstanceOf(JobFailedException.class).hasMessageContaining("job huge")
                .hasMessageContaining("frame limit of 1024 bytes");
        // The thread's scratch space is left clean for the next job.
        assertThat(small.encodeAssign(TestJobs.job("next", "p"), "w1"))
                .isEqualTo(small.codec.encodeFrame(new Message.Assign(TestJobs.job("next", "p"))));
    }

    @Test
    void aJobWhoseMetadataCannotBeWrittenFailsNamingTheVignetteAndTheField() {
        Job job = new Job(JobId.of("j9"), new EvalSpec("s", List.of(new Vignette("v3", "hi", null,
                Map.of("when", java.time.Instant.EPOCH))), SpecParams.NONE));
        assertThatThrownBy(() -> context().encodeAssign(job, "w1"))
                .isInstanceOf(JobFailedException.class)
                .hasMessageContaining("cannot send job j9 to worker w1")
                .hasMessageContaining("vignette 'v3'").hasMessageContaining("metadata.when");
    }

    @Test
    void nothingIsAllocatedForAConnectionThatNeverSendsAnything() {
        OutboundBuffer out = new OutboundBuffer();
        assertThat(out.isEmpty()).isTrue();
        out.appendFrame(new byte[] {0, 0, 0, 2, '{', '}'});
        assertThat(out.size()).isEqualTo(6);
    }
}

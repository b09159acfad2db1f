package dev.panoptes.control.wire;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FrameEncoderTest {
    private final MessageCodec codec = new MessageCodec();
    private final FrameEncoder encoder = new FrameEncoder(codec);

    @Test
    void everyMessageIsEncodedExactlyAsTheCodecEncodesItFrameAfterFrame() {
        for (Message m : MessageCodecTest.everyMessageType()) {
            assertThat(encoder.encode(m).toFrame()).as(m.type()).isEqualTo(codec.encodeFrame(m));
            assertThat(encoder.bodyLength()).isEqualTo(codec.encode(m).length);
        }
    }

    @Test
    void framesAppendedToAnOutboundBufferDecodeInOrder() throws Exception {
        OutboundBuffer out = new OutboundBuffer();
        List<Message> sent = MessageCodecTest.everyMessageType();
        for (Message m : sent) {
            encoder.encode(m).appendTo(out);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        out.writeTo(Channels.newChannel(bytes));
        List<Message> received = new ArrayList<>();
        new FrameDecoder(codec).feed(ByteBuffer.wrap(bytes.toByteArray()), received::add);
        assertThat(received).isEqualTo(sent);
    }

    @Test
    void aMessageThatCannotBeEncodedLeavesTheEncoderReadyForTheNext() {
        Job bad = new Job(JobId.of("j"), new EvalSpec("s", List.of(new Vignette("v1", "p", null,
                Map.of("at", Instant.EPOCH))), SpecParams.NONE));
        assertThatThrownBy(() -> encoder.encode(new Message.Assign(bad)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("vignette 'v1'");

        Message next = new Message.Assign(TestJobs.job("next", "p"));
        assertThat(encoder.encode(next).toFrame()).isEqualTo(codec.encodeFrame(next));
    }

    @Test
    void aHugeFrameDoesNotPinItsBufferForTheNextOne() {
        Message huge = new Message.Assign(TestJobs.job("huge", "x".repeat(1_000_000)));
        assertThat(encoder.encode(huge).bodyLength()).isGreaterThan(1_000_000);
        Message small = new Message.Assign(TestJobs.job("small", "p"));
        assertThat(encoder.encode(small).toFrame()).isEqualTo(codec.encodeFrame(small));
    }
}

package dev.panoptes.control.wire;

import dev.panoptes.control.JobId;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.TestJobs;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FrameDecoderTest {
    private final MessageCodec codec = new MessageCodec();

    @Test
    void aLongStreamCutAtRandomPointsYieldsExactlyTheOriginalMessages() {
        for (long seed = 0; seed < 200; seed++) {
            Random random = new Random(seed);
            List<Message> sent = randomMessages(random, 1 + random.nextInt(60));
            byte[] stream = frames(sent);
            FrameDecoder decoder = new FrameDecoder(codec);
            List<Message> received = new ArrayList<>();
            int at = 0;
            while (at < stream.length) {
                // Mix tiny cuts (splitting length prefixes) with large ones (many frames per read).
                int cut = random.nextInt(4) == 0 ? 1 + random.nextInt(3) : 1 + random.nextInt(stream.length);
                int n = Math.min(cut, stream.length - at);
                ByteBuffer chunk = random.nextBoolean()
                        ? ByteBuffer.wrap(stream, at, n).slice()
                        : ByteBuffer.allocateDirect(n).put(stream, at, n).flip();
                decoder.feed(chunk, received::add);
                assertThat(chunk.hasRemaining()).isFalse();
                at += n;
            }
            assertThat(received).as("seed %d", seed).isEqualTo(sent);
            assertThat(decoder.isMidFrame()).isFalse();
        }
    }

    @Test
    void aFrameDribbledOneByteAtATimeIsDecoded() {
        Message m = new Message.Assign(MessageCodecTest.richJob());
        byte[] frame = codec.encodeFrame(m);
        FrameDecoder decoder = new FrameDecoder(codec);
        List<Message> received = new ArrayList<>();
        for (int i = 0; i < frame.length; i++) {
            decoder.feed(ByteBuffer.wrap(frame, i, 1), received::add);
            assertThat(decoder.isMidFrame()).isEqualTo(i < frame.length - 1);
        }
        assertThat(received).containsExactly(m);
    }

    @Test
    void aHugeLengthIsRejectedBeforeAnythingIsAllocatedForIt() {
        FrameDecoder decoder = new FrameDecoder(codec);
        ByteBuffer prefix = ByteBuffer.wrap(new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, '{'});
        long before = allocatedBytes();
        assertThatThrownBy(() -> decoder.feed(prefix, m -> { }))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("frame length 2147483647 exceeds the limit of 16777216 bytes");
        assertThat(allocatedBytes() - before).isLessThan(1 << 20);
    }

    @Test
    void aLengthWithTheTopBitSetIsReadAsUnsignedAndRejected() {
        FrameDecoder decoder = new FrameDecoder(codec);
        assertThatThrownBy(() -> decoder.feed(ByteBuffer.wrap(new byte[] {(byte) 0xFF, 0, 0, 0}), m -> { }))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("frame length 4278190080 exceeds");
    }

    @Test
    void aZeroLengthIsRejected() {
        FrameDecoder decoder = new FrameDecoder(codec);
        assertThatThrownBy(() -> decoder.feed(ByteBuffer.wrap(new byte[] {0, 0, 0, 0}), m -> { }))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("frame length 0 is not allowed");
    }

    @Test
    void aLengthSplitAcrossReadsIsStillCheckedAgainstTheLimit() {
        FrameDecoder decoder = new FrameDecoder(new MessageCodec(1000));
        decoder.feed(ByteBuffer.wrap(new byte[] {0, 0}), m -> { });
        assertThatThrownBy(() -> decoder.feed(ByteBuffer.wrap(new byte[] {0x03, (byte) 0xE9}), m -> { }))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("frame length 1001 exceeds the limit of 1000 bytes");
    }

    @Test
    void aFrameThatAnnouncesManyBytesButSendsFewCostsOnlyWhatArrived() {
        FrameDecoder decoder = new FrameDecoder(codec);
        int announced = 16 * 1024 * 1024;
        ByteBuffer partial = ByteBuffer.allocate(14).putInt(announced).put("{\"type\":\"x".getBytes()).flip();
        long before = allocatedBytes();
        decoder.feed(partial, m -> { });
        assertThat(decoder.isMidFrame()).isTrue();
        assertThat(allocatedBytes() - before).isLessThan(1 << 20);
    }

    @Test
    void framesOfUnknownTypeAreSkippedAndTheStreamGoesOn() {
        byte[] unknown = frame("{\"type\":\"telemetry\",\"load\":3}");
        byte[] known = codec.encodeFrame(new Message.Drain());
        ByteBuffer both = ByteBuffer.allocate(unknown.length + known.length).put(unknown).put(known).flip();
        List<Message> received = new ArrayList<>();
        FrameDecoder decoder = new FrameDecoder(codec);
        decoder.feed(both, received::add);
        assertThat(received).containsExactly(new Message.Drain());
        assertThat(decoder.framesDecoded()).isEqualTo(2);
    }

    @Test
    void aMalformedBodyIsAProtocolErrorNamingTheProblem() {
        FrameDecoder decoder = new FrameDecoder(codec);
        assertThatThrownBy(() -> decoder.feed(ByteBuffer.wrap(frame("{\"type\":\"drain\"")), m -> { }))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("not valid JSON");
    }

    static List<Message> randomMessages(Random random, int count) {
        List<Message> all = MessageCodecTest.everyMessageType();
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (random.nextInt(5) == 0) {
                // Some large frames, so that bodies span many reads.
                String big = "x".repeat(random.nextInt(20_000));
                out.add(new Message.Assign(TestJobs.job("big-" + i, big, "small")));
            } else if (random.nextInt(5) == 0) {
                out.add(new Message.Failed(JobId.of("j" + i), "error " + random.nextInt(), random.nextBoolean()));
            } else {
                out.add(all.get(random.nextInt(all.size())));
            }
        }
        return out;
    }

    private byte[] frames(List<Message> messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Message m : messages) {
            out.writeBytes(codec.encodeFrame(m));
        }
        return out.toByteArray();
    }

    private static byte[] frame(String json) {
        byte[] body = json.getBytes();
        return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
    }

    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return threads.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    void aTlsRecordWhereTheFirstFrameLengthShouldBeSaysThePeerSpeaksTls() {
        MessageCodec codec = new MessageCodec();
        // A TLS alert (as a TLS coordinator answers plaintext) and a ClientHello's record header.
        for (byte[] first : new byte[][] {{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32}, {0x16, 0x03, 0x01, 0x02, 0x00}}) {
            FrameDecoder decoder = new FrameDecoder(codec);
            assertThatThrownBy(() -> decoder.feed(ByteBuffer.wrap(first), m -> { }))
                    .isInstanceOf(PeerSpeaksTlsException.class).hasMessageStartingWith("the peer speaks TLS")
                    .hasMessageNotContaining("exceeds the limit");
        }
        // After a first frame, the same bytes are just a length over the limit.
        FrameDecoder decoder = new FrameDecoder(codec);
        decoder.feed(ByteBuffer.wrap(codec.encodeFrame(new Message.Drain())), m -> { });
        assertThatThrownBy(() -> decoder.feed(ByteBuffer.wrap(new byte[] {0x16, 0x03, 0x01, 0x02}), m -> { }))
                .isNotInstanceOf(PeerSpeaksTlsException.class).hasMessageContaining("exceeds the limit");
    }
}

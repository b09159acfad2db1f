package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonParser;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One thread's frames are read by one parser, one after the other: the parser is kept across
 * frames, a frame that is not exactly one object (followed by whitespace at most) or that fails
 * is read the careful way and costs the parser, never the next frame's reading, and the parser
 * is renewed after a bounded amount of input.
 */
class ReusedParserTest {
    private final MessageCodec codec = new MessageCodec();
    private final MessageDecoder decoder = new MessageDecoder(codec.mapper());

    @Test
    void consecutiveFramesOfOneThreadAreReadByOneParser() throws Exception {
        ReusedParser reused = new ReusedParser(codec.mapper().getFactory());
        byte[] a = codec.encode(new Message.Result(outcome("j1", "4")));
        JsonParser first = reused.open(a, 0, a.length);
        assertThat(first).isNotNull();
        skipObject(first);
        assertThat(reused.finish()).isTrue();
        byte[] b = codec.encode(new Message.Heartbeat("w"));
        JsonParser second = reused.open(b, 0, b.length);
        assertThat(second).isSameAs(first);
        // A decode inside a decode gets a parser of its own.
        assertThat(reused.open(a, 0, a.length)).isNull();
        skipObject(second);
        assertThat(reused.finish()).isTrue();
    }

    @Test
    void theParserIsRenewedAfterAMebibyteOfFrames() throws Exception {
        ReusedParser reused = new ReusedParser(codec.mapper().getFactory());
        byte[] frame = codec.encode(new Message.Result(outcome("j1", "x".repeat(100_000))));
        JsonParser first = reused.open(frame, 0, frame.length);
        skipObject(first);
        assertThat(reused.finish()).isTrue();
        JsonParser p = first;
        long fed = frame.length;
        while (fed < ReusedParser.RENEW_AFTER_BYTES) {
            p = reused.open(frame, 0, frame.length);
            assertThat(p).isSameAs(first);
            skipObject(p);
            reused.finish();
            fed += frame.length;
        }
        assertThat(reused.open(frame, 0, frame.length)).isNotSameAs(first);
    }

    @Test
    void framesAfterAFaultyOneDecodeAsOnTheirOwn() {
        byte[] good = codec.encode(new Message.Result(outcome("j1", "4")));
        byte[] big = codec.encode(new Message.Result(outcome("j2", "y".repeat(20_000))));
        List<byte[]> frames = List.of(
                good,
                bytes("{\"type\":\"result\",\"outcome\":{\"jobId\":\"j3\",\"records\":["),   // truncated
                good,
                bytes("{\"type\":\"heartbeat\",\"workerId\":\"w\"} {\"type\":\"drain\"}"),    // two objects
                good,
                bytes("{\"type\":\"heartbeat\",\"workerId\":\"w\"} \n\t\r "),                 // trailing whitespace
                big,
                bytes("{\"type\":\"heartbeat\",\"workerId\":7}"),                             // wrong type
                bytes("{\"workerId\":\"w\",\"type\":\"heartbeat\"}"),                         // type not first
                good);
        for (int round = 0; round < 3; round++) {
            for (byte[] frame : frames) {
                // At an offset inside a larger array, as a connection's read buffer holds it.
                byte[] padded = new byte[frame.length + 10];
                Arrays.fill(padded, (byte) '{');
                System.arraycopy(frame, 0, padded, 5, frame.length);
                Optional<Message> expected;
                try {
                    expected = decoder.decodeCarefully(frame, 0, frame.length);
                } catch (ProtocolException e) {
                    assertThatThrownBy(() -> decoder.decode(padded, 5, frame.length))
                            .isInstanceOf(ProtocolException.class).hasMessage(e.getMessage());
                    continue;
                }
                assertThat(decoder.decode(padded, 5, frame.length)).isEqualTo(expected);
            }
        }
        assertThat(decoder.decode(good, 0, good.length)).contains(new Message.Result(outcome("j1", "4")));
    }

    @Test
    void anAnswersModelAndFinishReasonAreOneStringFromFrameToFrameAndAlwaysTheirOwnValue() {
        byte[] a = codec.encode(new Message.Result(outcome("j1", "4")));
        byte[] b = codec.encode(new Message.Result(outcome("j2", "5")));
        ResponseRecord first = ((Message.Result) decoder.decode(a, 0, a.length).orElseThrow()).outcome().records().get(0);
        ResponseRecord second = ((Message.Result) decoder.decode(b, 0, b.length).orElseThrow()).outcome().records().get(0);
        assertThat(second.model()).isEqualTo("stub").isSameAs(first.model());
        assertThat(second.finishReason()).isEqualTo("stop").isSameAs(first.finishReason());
        // Many names share the cache's few slots: each is still read as itself.
        for (int i = 0; i < 2_000; i++) {
            String model = "model-" + (i % 300);
            byte[] frame = codec.encode(new Message.Result(new JobOutcome(JobId.of("j" + i), List.of(
                    new ResponseRecord("v1", "r", model, i % 2 == 0 ? "stop" : "length", 1L, null)))));
            ResponseRecord r = ((Message.Result) decoder.decode(frame, 0, frame.length).orElseThrow()).outcome()
                    .records().get(0);
            assertThat(r.model()).isEqualTo(model);
            assertThat(r.finishReason()).isEqualTo(i % 2 == 0 ? "stop" : "length");
        }
    }

    private static JobOutcome outcome(String job, String response) {
        return new JobOutcome(JobId.of(job), List.of(new ResponseRecord("v1", response, "stub", "stop", 3L,
                new Usage(5, 1))));
    }

    private static void skipObject(JsonParser p) throws Exception {
        p.nextToken();
        p.skipChildren();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}

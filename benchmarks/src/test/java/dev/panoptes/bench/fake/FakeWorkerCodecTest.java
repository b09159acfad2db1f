package dev.panoptes.bench.fake;

import dev.panoptes.bench.dispatch.DispatchCoordinator;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class FakeWorkerCodecTest {
    private final MessageCodec codec = new MessageCodec();

    @Test
    void answersAnAssignWithTheResultTheRealCodecReadsBack() throws Exception {
        Job job = new Job(JobId.of("run-0001"), new EvalSpec("suite", List.of(
                new Vignette("a", "hi", "expected", Map.of("k", List.of(1, 2))),
                new Vignette("b \"quoted\"", "tab\there, a quote \" and a backslash \\ and é and \uD83D\uDE00")),
                new SpecParams("sys", 0.5, 16, 7L)));
        byte[] body = codec.encode(new Message.Assign(job));
        FakeWorkerCodec fake = new FakeWorkerCodec();

        assertThat(fake.onFrame(body, 0, body.length)).isTrue();

        ByteBuffer out = ByteBuffer.wrap(fake.out(), 0, fake.outLength());
        int length = out.getInt();
        assertThat(length).isEqualTo(fake.outLength() - 4);
        Message decoded = codec.decode(fake.out(), 4, length).orElseThrow();
        assertThat(decoded).isEqualTo(new Message.Result(BenchRunners.echo(job)));
    }

    @Test
    void writesTheBenchmarksPlainJobsByteForByteAsTheRealWorkerWould() throws Exception {
        Job job = new Job(JobId.of(DispatchCoordinator.sampleJobId()),
                new EvalSpec("bench", List.of(new Vignette("v0", DispatchCoordinator.PROMPT))));
        byte[] body = codec.encode(new Message.Assign(job));
        FakeWorkerCodec fake = new FakeWorkerCodec();
        fake.onFrame(body, 0, body.length);
        assertThat(java.util.Arrays.copyOf(fake.out(), fake.outLength()))
                .isEqualTo(codec.encodeFrame(new Message.Result(BenchRunners.echo(job))));
    }

    @Test
    void skipsFramesOfOtherTypes() throws Exception {
        byte[] body = codec.encode(new Message.Registered(5000));
        FakeWorkerCodec fake = new FakeWorkerCodec();
        assertThat(fake.onFrame(body, 0, body.length)).isFalse();
        assertThat(fake.lastType()).isEqualTo("registered");
        assertThat(fake.outLength()).isZero();
    }

    @Test
    void batchesSeveralAnswersInOneOutput() throws Exception {
        FakeWorkerCodec fake = new FakeWorkerCodec();
        for (int i = 0; i < 3; i++) {
            Job job = new Job(JobId.of("j" + i), new EvalSpec("s", List.of(new Vignette("v0", "p" + i))));
            byte[] body = codec.encode(new Message.Assign(job));
            fake.onFrame(body, 0, body.length);
        }
        ByteBuffer out = ByteBuffer.wrap(fake.out(), 0, fake.outLength());
        for (int i = 0; i < 3; i++) {
            int length = out.getInt();
            Message.Result r = (Message.Result) codec.decode(fake.out(), out.position(), length).orElseThrow();
            assertThat(r.outcome().jobId().value()).isEqualTo("j" + i);
            assertThat(r.outcome().records().get(0).response()).isEqualTo("re: p" + i);
            out.position(out.position() + length);
        }
        assertThat(out.hasRemaining()).isFalse();
    }

    @Test
    void answersAsARealWorkerWithModelLatencyUsageAndTheArithmeticAnswer() throws Exception {
        Job job = new Job(JobId.of("run-0002"), new EvalSpec("suite", List.of(
                new Vignette("q1", "What is 12 * 3?", "36", Map.of()),
                new Vignette("q2", "Tell me a joke"))));
        byte[] body = codec.encode(new Message.Assign(job));
        FakeWorkerCodec fake = new FakeWorkerCodec("stub", 2000);

        assertThat(fake.onFrame(body, 0, body.length)).isTrue();

        Message.Result r = (Message.Result) codec.decode(fake.out(), 4, fake.outLength() - 4).orElseThrow();
        assertThat(r.outcome().records()).containsExactly(
                new ResponseRecord("q1", "36", "stub", "stop", 2000L, new Usage(4, 1), null, null),
                new ResponseRecord("q2", "re: Tell me a joke", "stub", "stop", 2000L, new Usage(4, 5), null, null));
    }
}

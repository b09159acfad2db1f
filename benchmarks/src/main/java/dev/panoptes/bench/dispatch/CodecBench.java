package dev.panoptes.bench.dispatch;

import dev.panoptes.bench.fake.BenchRunners;
import dev.panoptes.bench.fake.FakeWorkerCodec;
import dev.panoptes.bench.harness.Report;
import dev.panoptes.bench.harness.Stats;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongUnaryOperator;

/**
 * The per-frame cost of the wire work on each side of a dispatch, in one thread of this JVM:
 * what the coordinator does per job (encode an assign, decode a result through the
 * {@link FrameDecoder}), what the real worker does (decode an assign, encode a result with the
 * {@link MessageCodec}), and what the fast fake worker does instead. Not a measurement of the
 * issue; the evidence behind the dispatch profile's reading of where the time goes.
 */
public final class CodecBench {
    private static volatile long sink;

    private CodecBench() {
    }

    public static int run(Report report, int runs, long warmupMs, long measureMs) throws Exception {
        MessageCodec codec = new MessageCodec();
        Job job = new Job(JobId.of(DispatchCoordinator.sampleJobId()),
                new EvalSpec("bench", List.of(new Vignette("v0", DispatchCoordinator.PROMPT))));
        Message.Assign assign = new Message.Assign(job);
        Message.Result result = new Message.Result(BenchRunners.echo(job));
        byte[] assignBody = codec.encode(assign);
        byte[] resultFrame = codec.encodeFrame(result);
        byte[] resultBody = codec.encode(result);
        FrameDecoder decoder = new FrameDecoder(codec);
        ByteBuffer resultBuffer = ByteBuffer.wrap(resultFrame);
        FakeWorkerCodec fake = new FakeWorkerCodec();

        Map<String, LongUnaryOperator> cases = new LinkedHashMap<>();
        cases.put("coordinator: MessageCodec.encodeFrame(assign)", i -> codec.encodeFrame(assign).length);
        cases.put("coordinator: FrameDecoder.feed(result frame) -> Result", i -> {
            resultBuffer.clear();
            long[] n = {0};
            decoder.feed(resultBuffer, m -> n[0] += ((Message.Result) m).outcome().records().size());
            return n[0];
        });
        cases.put("coordinator: JobOutcome.requireAnswers(job)", i -> result.outcome().requireAnswers(job).records()
                .size());
        cases.put("real worker: MessageCodec.decode(assign body)", i -> codec.decode(assignBody).isPresent() ? 1 : 0);
        cases.put("real worker: MessageCodec.encodeFrame(result)", i -> codec.encodeFrame(result).length);
        cases.put("fake worker: streaming parse of assign + hand-written result", i -> {
            try {
                fake.onFrame(assignBody, 0, assignBody.length);
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
            int len = fake.outLength();
            fake.clearOutput();
            return len;
        });
        cases.put("reference: MessageCodec.decode(result body) alone", i -> codec.decode(resultBody).isPresent() ? 1 : 0);

        List<List<String>> rows = new ArrayList<>();
        for (Map.Entry<String, LongUnaryOperator> e : cases.entrySet()) {
            measure(e.getValue(), warmupMs);
            double[] ns = new double[runs];
            for (int r = 0; r < runs; r++) {
                ns[r] = measure(e.getValue(), measureMs);
            }
            Stats s = Stats.of(ns);
            rows.add(List.of(e.getKey(), s.format(0)));
            report.progress(String.format(Locale.ROOT, "%s: %.0f ns", e.getKey(), s.median()));
        }
        report.line("");
        report.line("### codec: per-frame wire work, one thread (" + runs + " runs of " + measureMs + " ms after "
                + warmupMs + " ms warm-up; ns per frame, median (min-max))");
        report.line("");
        report.line("Frames: assign " + assignBody.length + " B, result " + resultBody.length + " B (bodies).");
        report.line("");
        report.table(List.of("operation", "ns per frame"), rows);
        return 0;
    }

    /** Runs the operation for about {@code ms} and returns nanoseconds per call. */
    private static double measure(LongUnaryOperator op, long ms) {
        long end = System.nanoTime() + ms * 1_000_000;
        long calls = 0;
        long acc = 0;
        long start = System.nanoTime();
        long now;
        do {
            for (int i = 0; i < 256; i++) {
                acc += op.applyAsLong(calls + i);
            }
            calls += 256;
            now = System.nanoTime();
        } while (now < end);
        sink = acc;
        return (double) (now - start) / calls;
    }
}

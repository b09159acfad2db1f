package dev.panoptes.control.wire;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MessageCodecTest {
    private final MessageCodec codec = new MessageCodec();

    static Job richJob() {
        Map<String, Object> metadata = Map.of("topic", "math", "level", 3, "tags", List.of("a", "b"));
        return new Job(JobId.of("run1-0001"), new EvalSpec("demo", List.of(
                new Vignette("a", "hi", "hello", metadata),
                new Vignette("b", "yo")),
                new SpecParams("be terse", 0.2, 64, 42L)));
    }

    static JobOutcome richOutcome() {
        return new JobOutcome(JobId.of("run1-0001"), List.of(
                new ResponseRecord("a", "hello", "llama-3.1-8b", "stop", 120L, new Usage(5, 2)),
                new ResponseRecord("b", "")));
    }

    /** An outcome whose second vignette the model API refused. */
    static JobOutcome failedAnswerOutcome() {
        return new JobOutcome(JobId.of("run1-0002"), List.of(
                new ResponseRecord("c", "42", "llama-3.1-8b", "stop", 80L, new Usage(4, 1)),
                ResponseRecord.failed("d", "llama-3.1-8b", 12L, "HTTP 400: This model's maximum context length is"
                        + " 8192 tokens. (type invalid_request_error, code context_length_exceeded), from POST"
                        + " http://gpu-07:8000/v1/chat/completions")));
    }

    static List<Message> everyMessageType() {
        return List.of(
                new Message.Register("w1", 2, 1, "s3cret", Map.of("model", "llama")),
                new Message.Register("w2", 1),
                new Message.Heartbeat("w1"),
                Message.Heartbeat.COORDINATOR,
                new Message.Result(richOutcome()),
                new Message.Result(failedAnswerOutcome()),
                new Message.Failed(JobId.of("j1"), "model API answered 400", false),
                Message.Failed.of(JobId.of("j2"), "model API answered 404", FailureScope.WORKER),
                Message.Failed.of(JobId.of("j3"), "model API answered 503", FailureScope.TRANSIENT),
                Message.Failed.of(JobId.of("j4"), "vignette 4 of 4: 503", FailureScope.TRANSIENT)
                        .withSpent(new Usage(300, 30)),
                new Message.Drain(),
                new Message.Throttled(7),
                new Message.Register("w3", 4, 1, null, Map.of("endpoint", "http://gpu-07:8000/v1"), List.of("a", "b")),
                new Message.Registered(5000),
                new Message.Registered(5000, 64L << 20),
                new Message.Rejected("wrong token"),
                new Message.Rejected("coordinator busy", true),
                new Message.Assign(richJob()),
                new Message.Cancel(JobId.of("j1"), "deadline of 2 s passed"),
                new Message.Cancel(JobId.of("j1"), null),
                new Message.Assign(sandboxedJob()),
                new Message.Result(new JobOutcome(JobId.of("run1-0003"), List.of(new ResponseRecord("s1", "907",
                        "m", "submit", 900L, new Usage(40, 9), null, "{\"turns\":2,\"check\":{\"passed\":true}}")))));
    }

    /** A job whose vignette runs in a sandbox: tools, limits, files, setup, answer file and check. */
    static Job sandboxedJob() {
        dev.panoptes.control.SandboxTask task = new dev.panoptes.control.SandboxTask(List.of("bash", "submit"), 8,
                20000L, java.time.Duration.ofSeconds(120), Map.of("numbers.txt", "12\n907\n"),
                List.of("mkdir out"), "answer.txt", "test \"$(cat answer.txt)\" = 907");
        return new Job(JobId.of("run1-0003"), new EvalSpec("agent", List.of(new Vignette("s1", "find the largest",
                null, Map.of(), List.of(), null, null, task)), SpecParams.NONE));
    }

    @Test
    void aFailedFrameFromAnOlderWorkerTakesItsScopeFromRetryable() {
        Message.Failed old = (Message.Failed) codec.decode(
                "{\"type\":\"failed\",\"jobId\":\"j1\",\"error\":\"x\",\"retryable\":true}".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertThat(old.scope()).isNull();
        assertThat(old.effectiveScope()).isEqualTo(FailureScope.TRANSIENT);
        Message.Failed notRetryable = (Message.Failed) codec.decode(
                "{\"type\":\"failed\",\"jobId\":\"j1\",\"error\":\"x\",\"retryable\":false}".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertThat(notRetryable.effectiveScope()).isEqualTo(FailureScope.JOB);
    }

    @Test
    void aFailedFrameCarriesTheTokensItsJobSpentAndOneWithoutThemSaysNone() {
        Message.Failed spent = Message.Failed.of(JobId.of("j1"), "503", FailureScope.TRANSIENT)
                .withSpent(new Usage(300, 30));
        assertThat(new String(codec.encode(spent), StandardCharsets.UTF_8))
                .contains("\"spent\":{\"promptTokens\":300,\"completionTokens\":30}");
        assertThat(((Message.Failed) codec.decode(codec.encode(spent)).orElseThrow()).spent())
                .isEqualTo(new Usage(300, 30));
        // A worker of revision 7 or older sends no "spent": nothing was said, and nothing is counted.
        Message.Failed old = (Message.Failed) codec.decode(("{\"type\":\"failed\",\"jobId\":\"j1\",\"error\":\"x\","
                + "\"retryable\":true,\"scope\":\"transient\"}").getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertThat(old.spent()).isNull();
        // Nothing spent is not written, so that an older coordinator sees the frame it always did.
        Message.Failed none = Message.Failed.of(JobId.of("j1"), "503", FailureScope.TRANSIENT).withSpent(Usage.ZERO);
        assertThat(new String(codec.encode(none), StandardCharsets.UTF_8)).doesNotContain("spent");
        // A field a later revision adds inside "spent" is skipped.
        Message.Failed later = (Message.Failed) codec.decode(("{\"type\":\"failed\",\"jobId\":\"j1\",\"error\":\"x\","
                + "\"retryable\":true,\"spent\":{\"promptTokens\":5,\"cachedTokens\":2,\"completionTokens\":1}}")
                .getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertThat(later.spent()).isEqualTo(new Usage(5, 1));
    }

    @Test
    void aScopeFromANewerWorkerThatThisVersionDoesNotKnowFallsBackOnRetryable() {
        Message.Failed m = (Message.Failed) codec.decode(("{\"type\":\"failed\",\"jobId\":\"j1\",\"error\":\"x\","
                + "\"retryable\":true,\"scope\":\"cosmic-rays\"}").getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertThat(m.effectiveScope()).isEqualTo(FailureScope.TRANSIENT);
        // Read from its tree, as a frame out of normal form is, it decodes alike.
        assertThat(codec.decodeCarefully(codec.encode(m), 0, codec.encode(m).length)).contains(m);
    }

    @Test
    void aWorkerScopedFailureIsRetryableForOlderCoordinators() {
        Message.Failed m = Message.Failed.of(JobId.of("j1"), "404", FailureScope.WORKER);
        assertThat(m.retryable()).isTrue();
        assertThat(new String(codec.encode(m), StandardCharsets.UTF_8)).contains("\"retryable\":true", "\"scope\":\"worker\"");
        assertThat(Message.Failed.of(JobId.of("j1"), "400", FailureScope.JOB).retryable()).isFalse();
    }

    @Test
    void aRejectionIsFinalUnlessItSaysOtherwise() {
        Message.Rejected m = (Message.Rejected) codec.decode(
                "{\"type\":\"rejected\",\"reason\":\"wrong token\"}".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertThat(m.retryable()).isFalse();
    }

    @Test
    void metadataThatCannotBeWrittenNamesTheVignetteAndTheField() {
        Map<String, Object> metadata = new java.util.LinkedHashMap<>();
        metadata.put("topic", "time");
        metadata.put("when", Map.of("at", java.time.Instant.EPOCH));
        Job job = new Job(JobId.of("j1"), new EvalSpec("s", List.of(new Vignette("v7", "hi", null, metadata)),
                SpecParams.NONE));
        assertThatThrownBy(() -> codec.encodeFrame(new Message.Assign(job)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("vignette 'v7'")
                .hasMessageContaining("metadata.when.at");
    }

    @Test
    void everyMessageTypeSurvivesARoundTrip() {
        for (Message m : everyMessageType()) {
            assertThat(codec.decode(codec.encode(m))).as(m.type()).contains(m);
        }
    }

    @Test
    void aFailedAnswerCarriesItsErrorAndAnAnswerNone() {
        String failed = new String(codec.encode(new Message.Result(failedAnswerOutcome())), StandardCharsets.UTF_8);
        assertThat(failed).contains("\"vignetteId\":\"d\",\"response\":\"\"")
                .contains("\"error\":\"HTTP 400: This model's maximum context length");
        String answered = new String(codec.encode(new Message.Result(richOutcome())), StandardCharsets.UTF_8);
        assertThat(answered).doesNotContain("\"error\"");

        Message decoded = decode("{\"type\":\"result\",\"outcome\":{\"jobId\":\"j\",\"records\":["
                + "{\"vignetteId\":\"a\",\"response\":\"\",\"error\":\"HTTP 413: too large\"},"
                + "{\"vignetteId\":\"b\",\"response\":\"ok\",\"error\":null}]}}");
        List<ResponseRecord> records = ((Message.Result) decoded).outcome().records();
        assertThat(records.get(0).isFailed()).isTrue();
        assertThat(records.get(0).error()).isEqualTo("HTTP 413: too large");
        assertThat(records.get(1).isFailed()).isFalse();
    }

    @Test
    void aFailedAnswerWithAnEmptyOrNonStringErrorIsAProtocolError() {
        assertThatThrownBy(() -> decode("{\"type\":\"result\",\"outcome\":{\"jobId\":\"j\",\"records\":["
                + "{\"vignetteId\":\"a\",\"response\":\"\",\"error\":\"\"}]}}"))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("vignette 'a'")
                .hasMessageContaining("must say why");
        assertThatThrownBy(() -> decode("{\"type\":\"result\",\"outcome\":{\"jobId\":\"j\",\"records\":["
                + "{\"vignetteId\":\"a\",\"response\":\"\",\"error\":400}]}}"))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("error");
    }

    @Test
    void framesCarryABigEndianLengthPrefix() {
        Message m = new Message.Rejected("no");
        byte[] frame = codec.encodeFrame(m);
        byte[] body = codec.encode(m);
        assertThat(frame).hasSize(body.length + 4);
        assertThat(((frame[0] & 0xff) << 24) | ((frame[1] & 0xff) << 16) | ((frame[2] & 0xff) << 8) | (frame[3] & 0xff))
                .isEqualTo(body.length);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"type\":\"register\",\"workerId\":\"w1\",\"capacity\":2,\"protocol\":1}",
        "{\"type\":\"registered\",\"heartbeatMs\":5000}",
        "{\"type\":\"assign\",\"job\":{\"id\":\"run1-0001\",\"spec\":{\"name\":\"demo\",\"vignettes\":[{\"id\":\"a\",\"prompt\":\"hi\"}]}}}",
        "{\"type\":\"assign\",\"job\":{\"id\":\"run1-0002\",\"spec\":{\"name\":\"demo\",\"vignettes\":[{\"id\":\"b\",\"prompt\":\"yo\"}]}}}",
        "{\"type\":\"result\",\"outcome\":{\"jobId\":\"run1-0002\",\"records\":[{\"vignetteId\":\"b\",\"response\":\"re: yo\"}]}}",
        "{\"type\":\"heartbeat\",\"workerId\":\"w1\"}",
        "{\"type\":\"result\",\"outcome\":{\"jobId\":\"run1-0001\",\"records\":[{\"vignetteId\":\"a\",\"response\":\"re: hi\"}]}}",
        // Every field name the encoder writes from its pre-encoded constants, to the byte.
        "{\"type\":\"result\",\"outcome\":{\"jobId\":\"j\",\"records\":[{\"vignetteId\":\"a\",\"response\":\"r\","
                + "\"model\":\"m\",\"finishReason\":\"stop\",\"latencyMs\":12,\"usage\":{\"promptTokens\":3,"
                + "\"completionTokens\":4}}]}}",
        "{\"type\":\"assign\",\"job\":{\"id\":\"j\",\"spec\":{\"name\":\"n\",\"vignettes\":[{\"id\":\"a\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"hi\"}],\"scorer\":\"exact\",\"expected\":\"4\"}]}}}",
    })
    void theProtocolsExampleSessionDecodesAndEncodesByteForByte(String frame) {
        Optional<Message> decoded = codec.decode(frame.getBytes(StandardCharsets.UTF_8));
        assertThat(decoded).isPresent();
        assertThat(new String(codec.encode(decoded.get()), StandardCharsets.UTF_8)).isEqualTo(frame);
    }

    @Test
    void theExampleSessionMeansWhatItSays() {
        Message assign = decode("{\"type\":\"assign\",\"job\":{\"id\":\"run1-0001\",\"spec\":{\"name\":\"demo\","
                + "\"vignettes\":[{\"id\":\"a\",\"prompt\":\"hi\"}]}}}");
        assertThat(assign).isInstanceOf(Message.Assign.class);
        Job job = ((Message.Assign) assign).job();
        assertThat(job.id()).isEqualTo(JobId.of("run1-0001"));
        assertThat(job.spec().vignettes()).containsExactly(new Vignette("a", "hi"));
        assertThat(job.spec().params()).isEqualTo(SpecParams.NONE);
    }

    @Test
    void unknownFieldsAreIgnoredAtEveryLevel() {
        Message m = decode("{\"type\":\"assign\",\"future\":1,\"job\":{\"id\":\"j\",\"x\":[1],\"spec\":{\"name\":\"n\","
                + "\"vignettes\":[{\"id\":\"a\",\"prompt\":\"p\",\"new\":{}}],\"params\":{\"topP\":0.9}}}}");
        assertThat(((Message.Assign) m).job().spec().vignettes()).containsExactly(new Vignette("a", "p"));
    }

    @Test
    void anUnknownTypeDecodesToNothingSoThatNewerPeersCanTalkToUs() {
        assertThat(codec.decode(bytes("{\"type\":\"telemetry\",\"cpu\":0.5}"))).isEmpty();
    }

    @Test
    void optionalFieldsMayBeNull() {
        Message m = decode("{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"token\":null,"
                + "\"labels\":null}");
        assertThat(m).isEqualTo(new Message.Register("w", 1, 1, null, Map.of()));
    }

    @Test
    void aRegisterNeitherSendsNorHoldsCredentialsInAUrlLabel() {
        String secretUrl = "http://user:secret@127.0.0.1:8000/v1?api-key=SECRET";
        Message.Register sent = new Message.Register("w", 1, 1, null, Map.of("endpoint", secretUrl, "zone", "eu"));
        String json = new String(codec.encode(sent), StandardCharsets.UTF_8);
        assertThat(json).contains("\"endpoint\":\"http://127.0.0.1:8000/v1\"").contains("\"zone\":\"eu\"")
                .doesNotContain("secret").doesNotContain("SECRET");

        // What another implementation might send: the coordinator keeps only scheme://host:port/path.
        Message received = decode("{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,"
                + "\"labels\":{\"endpoint\":\"" + secretUrl + "\"}}");
        assertThat(((Message.Register) received).labels()).containsExactly(Map.entry("endpoint",
                "http://127.0.0.1:8000/v1"));
        assertThat(received.toString()).doesNotContain("secret").doesNotContain("SECRET");
    }

    @Test
    void hugeIntegersAreClampedNotRejected() {
        Message m = decode("{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":99999999999999999999999,"
                + "\"protocol\":1}");
        assertThat(((Message.Register) m).capacity()).isEqualTo(Integer.MAX_VALUE);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"type\":\"register\"                                              | not valid JSON",
        "[1,2,3]                                                             | must hold one JSON object, got an array",
        "\"register\"                                                        | must hold one JSON object, got a string",
        "{\"workerId\":\"w\"}                                                | no \"type\" field",
        "{\"type\":7}                                                        | \"type\" must be a string, got an integer",
        "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":\"2\",\"protocol\":1} | register.capacity must be an integer, got a string",
        "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":2.5,\"protocol\":1}   | register.capacity must be an integer, got a number",
        "{\"type\":\"register\",\"capacity\":2,\"protocol\":1}                 | register has no \"workerId\" field",
        "{\"type\":\"failed\",\"jobId\":\"j\",\"error\":\"x\",\"retryable\":\"yes\"}  | failed.retryable must be a boolean, got a string",
        "{\"type\":\"assign\",\"job\":{\"id\":\"j\",\"spec\":{\"name\":\"n\",\"vignettes\":[]}}} | at least one vignette",
        "{\"type\":\"assign\",\"job\":{\"id\":\"j\",\"spec\":{\"name\":\"n\",\"vignettes\":[{\"id\":\"a\",\"prompt\":5}]}}} | assign.job.spec.vignettes[0].prompt must be a string, got an integer",
        "{\"type\":\"assign\",\"job\":{\"id\":\"j\",\"spec\":{\"name\":\"n\",\"vignettes\":[3]}}} | assign.job.spec.vignettes[0] must be an object, got an integer",
        "{\"type\":\"assign\",\"job\":{\"id\":\"\",\"spec\":{\"name\":\"n\",\"vignettes\":[{\"id\":\"a\",\"prompt\":\"p\"}]}}} | job id must not be empty",
        "{\"type\":\"result\",\"outcome\":{\"jobId\":\"j\",\"records\":{}}}   | result.outcome.records must be an array, got an object",
        "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"labels\":{\"a\":1}} | register.labels.a must be a string, got an integer",
        "{\"type\":\"rejected\"} {\"type\":\"rejected\"}                      | not valid JSON",
    })
    void malformedFramesAreRejectedWithAMessageSayingWhatWasWrong(String frame, String expected) {
        assertThatThrownBy(() -> codec.decode(bytes(frame)))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining(expected.trim());
    }

    @Test
    void invalidUtf8IsAProtocolError() {
        byte[] frame = {'{', '"', 't', 'y', 'p', 'e', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        assertThatThrownBy(() -> codec.decode(frame)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("not valid JSON");
    }

    @Test
    void aTooLargeMessageCannotBeEncodedIntoAFrame() {
        MessageCodec small = new MessageCodec(64);
        assertThatThrownBy(() -> small.encodeFrame(new Message.Rejected("x".repeat(100))))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("frame limit is 64 bytes");
    }

    @Test
    void theRegisterTokenNeverAppearsInToString() {
        assertThat(new Message.Register("w", 1, 1, "s3cret", Map.of()).toString()).doesNotContain("s3cret");
    }

    private Message decode(String json) {
        return codec.decode(bytes(json)).orElseThrow();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aOneChoiceVignetteLmEvalsLoglikelihoodRequestCrossesTheWireWithItsEmptyDelimiter() throws Exception {
        Vignette continuation = Vignette.multipleChoice("0", "she held up the pot and said it was",
                new dev.panoptes.control.Choices(List.of(" tea"), ""), 0, Map.of());
        Job job = new Job(JobId.of("run1-0009"), new EvalSpec("lambada", List.of(continuation),
                new SpecParams(null, 0.0, null, null)));
        byte[] frame = codec.encode(new Message.Assign(job));
        assertThat(new String(frame, StandardCharsets.UTF_8)).contains("\"choices\":[\" tea\"]")
                .contains("\"choiceDelimiter\":\"\"");

        Vignette read = ((Message.Assign) codec.decode(frame).orElseThrow()).job().spec().vignettes().get(0);
        assertThat(read.choices().texts()).containsExactly(" tea");
        assertThat(read.choices().delimiter()).isEmpty();
        assertThat(read.expected()).isEqualTo("0");
    }
}

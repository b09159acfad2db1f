package dev.panoptes.control.wire;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChatVignetteCodecTest {
    private static final String CHAT_LINE = "{\"id\":\"c1\",\"messages\":[{\"role\":\"system\",\"content\":\"be terse\"},"
            + "{\"role\":\"user\",\"content\":\"2+2?\"},{\"role\":\"assistant\",\"content\":\"5\"},"
            + "{\"role\":\"user\",\"content\":\"sure?\"}],\"expected\":\"4\",\"scorer\":\"numeric:0.01\","
            + "\"metadata\":{\"topic\":\"math\"}}";
    private static final Vignette CHAT = new Vignette("c1", null, "4", Map.of("topic", "math"), List.of(
            new ChatMessage("system", "be terse"), ChatMessage.user("2+2?"), ChatMessage.assistant("5"),
            ChatMessage.user("sure?")), "numeric:0.01");

    private final MessageCodec codec = new MessageCodec();
    private final MessageDecoder decoder = new MessageDecoder(codec.mapper());
    private final VignetteLineDecoder lines = new VignetteLineDecoder(codec.mapper(), decoder.payloads());

    private static Job chatJob() {
        return new Job(JobId.of("run1-gpt-4o-e0-0000"), new EvalSpec("chat", List.of(
                CHAT,
                new Vignette("p1", "Capital of France?", "Paris", Map.of(), List.of(), "normalized"),
                new Vignette("p2", "Say hi")),
                new SpecParams("be kind", 0.5, 128, 7L, "meta-llama/Llama-3.1-8B")));
    }

    private static byte[] bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void anAssignWithChatVignettesScorersAndAModelSurvivesTheOnePassAndTheCarefulReading() throws Exception {
        Message.Assign assign = new Message.Assign(chatJob());
        byte[] frame = codec.encodeFrame(assign);
        byte[] body = Arrays.copyOfRange(frame, MessageCodec.LENGTH_PREFIX_BYTES, frame.length);

        assertThat(codec.decode(frame, MessageCodec.LENGTH_PREFIX_BYTES, body.length)).contains(assign);
        // The frame is read in one pass (an exception would mean it must be read again from its tree).
        assertThat(decoder.readInOnePass(body, 0, body.length)).isEqualTo(assign);
        assertThat(codec.decodeCarefully(body, 0, body.length)).contains(assign);
        Job decoded = ((Message.Assign) codec.decode(body).orElseThrow()).job();
        assertThat(decoded.model()).isEqualTo("meta-llama/Llama-3.1-8B");
        assertThat(decoded.spec().vignettes().get(0).messages()).hasSize(4);
    }

    @Test
    void aChatVignetteIsWrittenWithMessagesAndWithoutAPrompt() {
        String json = new String(codec.encode(new Message.Assign(chatJob())), StandardCharsets.UTF_8);

        assertThat(json).contains("{\"id\":\"c1\",\"messages\":[{\"role\":\"system\",\"content\":\"be terse\"},")
                .contains("\"scorer\":\"numeric:0.01\"")
                .contains("\"model\":\"meta-llama/Llama-3.1-8B\"")
                .contains("{\"id\":\"p2\",\"prompt\":\"Say hi\"}");
        assertThat(json.substring(json.indexOf("\"c1\""), json.indexOf("\"p1\""))).doesNotContain("\"prompt\"");
    }

    @Test
    void theRunAndEpochOfAJobDoNotTravel() {
        Job job = chatJob();
        Job inRun = new Job(job.id(), job.spec(), "0123456789abcdef", 2);

        Message decoded = codec.decode(codec.encode(new Message.Assign(inRun))).orElseThrow();

        assertThat(((Message.Assign) decoded).job()).isEqualTo(job);
    }

    @Test
    void aSuiteLineWithMessagesDecodesAlikeThroughEveryPath() throws Exception {
        assertThat(codec.vignette(CHAT_LINE, "vignette")).isEqualTo(CHAT);
        assertThat(lines.lineInOnePass(CHAT_LINE)).isEqualTo(CHAT);
        assertThat(lines.lineCarefully(CHAT_LINE, "vignette")).isEqualTo(CHAT);
    }

    @Test
    void aJsonlStreamWithChatAndPromptVignettesIsReadInOnePass() {
        String jsonl = CHAT_LINE + "\n"
                + "{\"id\":\"p1\",\"prompt\":\"hi\",\"scorer\":\"exact\",\"expected\":\"hello\"}\n"
                + "{\"id\":\"p2\",\"messages\":null,\"prompt\":\"yo\"}\n";

        Optional<List<Vignette>> vignettes = codec.vignettes(new ByteArrayInputStream(bytes(jsonl)));

        assertThat(vignettes).contains(List.of(CHAT,
                new Vignette("p1", "hi", "hello", Map.of(), List.of(), "exact"),
                new Vignette("p2", "yo")));
    }

    @Test
    void aStreamWithAChatThatDoesNotEndWithTheUserIsLeftToTheLineByLineReading() {
        String jsonl = "{\"id\":\"c1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                + "{\"role\":\"assistant\",\"content\":\"hello\"}]}\n";
        assertThat(codec.vignettes(new ByteArrayInputStream(bytes(jsonl)))).isEmpty();
        assertThatThrownBy(() -> codec.vignette(jsonl.trim(), "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("must end with a user message");
    }

    @Test
    void badMessagesAreProtocolErrorsNamingWhatIsWrong() {
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}",
                "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("'tool'");
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"messages\":\"hi\"}", "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("vignette.messages must be an array");
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"messages\":[{\"role\":\"user\"}]}", "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("vignette.messages[0] has no \"content\" field");
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"messages\":[{\"role\":\"user\",\"content\":3}]}",
                "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("vignette.messages[0].content must be a string, got an integer");
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"prompt\":\"hi\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"hi\"}]}", "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("gives both prompt and messages");
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"messages\":[]}", "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("vignette has no \"prompt\" field");
        assertThatThrownBy(() -> codec.vignette("{\"id\":\"c1\",\"prompt\":\"hi\",\"scorer\":7}", "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("vignette.scorer must be a string");
    }

    @Test
    void anAssignWithAWrongChatIsAProtocolErrorNamingTheFrame() {
        String frame = "{\"type\":\"assign\",\"job\":{\"id\":\"j\",\"spec\":{\"name\":\"n\",\"vignettes\":"
                + "[{\"id\":\"c1\",\"messages\":[{\"role\":\"assistant\",\"content\":\"x\"}]}]}}}";
        assertThatThrownBy(() -> codec.decode(bytes(frame)))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("invalid assign frame")
                .hasMessageContaining("must end with a user message");
    }

    @Test
    void aRegisterFrameWithModelsSurvivesARoundTrip() {
        Message.Register register = new Message.Register("w1", 4, Message.PROTOCOL_VERSION, "s3cret",
                Map.of("zone", "eu"), List.of("meta-llama/Llama-3.1-8B", "gpt-4o"));
        byte[] body = codec.encode(register);

        assertThat(new String(body, StandardCharsets.UTF_8))
                .contains("\"models\":[\"meta-llama/Llama-3.1-8B\",\"gpt-4o\"]");
        assertThat(codec.decode(body)).contains(register);
        assertThat(codec.decodeCarefully(body, 0, body.length)).contains(register);
    }

    @Test
    void aRegisterFrameWithoutModelsNamesNone() {
        Message.Register register = new Message.Register("w1", 2);
        byte[] body = codec.encode(register);

        assertThat(new String(body, StandardCharsets.UTF_8)).doesNotContain("models");
        Message.Register decoded = (Message.Register) codec.decode(body).orElseThrow();
        assertThat(decoded.models()).isEmpty();
        Message.Register nullModels = (Message.Register) codec.decode(bytes(
                "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"models\":null}")).orElseThrow();
        assertThat(nullModels.models()).isEmpty();
    }

    @Test
    void modelsOfTheWrongJsonTypeAreAProtocolErrorNamingTheField() {
        assertThatThrownBy(() -> codec.decode(bytes(
                "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"models\":\"gpt-4o\"}")))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("register.models must be an array of strings, got a string");
        assertThatThrownBy(() -> codec.decode(bytes(
                "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"models\":{\"a\":1}}")))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("register.models must be an array of strings, got an object");
        assertThatThrownBy(() -> codec.decode(bytes(
                "{\"type\":\"register\",\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"models\":[\"a\",3]}")))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("register.models[1] must be a string, got an integer");
    }
}

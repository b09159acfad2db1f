package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.ExtraBody;
import dev.panoptes.control.SystemMessages;
import dev.panoptes.eval.ToolChat;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.http.FakeOpenAiServer.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChatRequestBodyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final FakeOpenAiServer server = new FakeOpenAiServer();

    @AfterEach
    void tearDown() {
        server.close();
    }

    private static Job job() {
        Vignette v = new Vignette("q1", "2+2?").withTurnsBefore(List.of(ChatMessage.user("1+1?"),
                ChatMessage.assistant("2")));
        return new Job(JobId.of("run-m-e0-0000"), new EvalSpec("math", List.of(v),
                new SpecParams("Answer with a number.", 0.0, 16, 3L).withModel("m")), "run", 0);
    }

    @Test
    void theRenderedBodyIsTheBodyAWorkerPosts() throws Exception {
        server.enqueue(Reply.completion("m", "4", "stop", 10, 1));
        Job job = job();
        try (HttpModelClient client = HttpModelClient.builder(server.baseUrl(), "worker-default")
                .requestTimeout(Duration.ofSeconds(5)).build()) {
            new EvalJobRunner(client).run(job);
        }
        ModelRequest request = EvalJobRunner.request(job, 0);

        assertThat(ChatRequestBody.json(request, "worker-default", false)).isEqualTo(server.requests().get(0).body());
        assertThat(JSON.readTree(ChatRequestBody.json(request, null, true)))
                .isEqualTo(JSON.readTree(server.requests().get(0).body()));
        assertThat(ChatRequestBody.json(request, null, true)).contains("\n")
                .contains("\"role\" : \"system\"").contains("\"content\" : \"1+1?\"").contains("\"seed\" : 3");
    }

    @Test
    void aRequestWithoutAModelTakesTheWorkersOrIsRefused() {
        ModelRequest bare = new ModelRequest("hi", SpecParams.NONE);

        assertThat(ChatRequestBody.json(bare, "w", false)).startsWith("{\"model\":\"w\",\"messages\":");
        assertThatThrownBy(() -> ChatRequestBody.json(bare, null, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names no model");
    }

    @Test
    void theBodyWrittenFieldByFieldIsByteForByteTheTreeItReplaced() throws Exception {
        JsonNode assistant = JSON.readTree("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"a\","
                + "\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{}\"}}]}");
        JsonNode tool = JSON.readTree("{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"x\\n\\u00e9\"}");
        SpecParams all = new SpecParams("Be brief. \u2603 \"quoted\"", 0.7, 64, 123456789012L).withModel("m")
                .withSampling(0.95, List.of("\n\n", "END"), ExtraBody.of(List.of("min_p=0.05",
                        "chat_template_kwargs={\"enable_thinking\":false}", "tools=[1]", "tool_choice=none",
                        "label=plain text")));
        List<ModelRequest> requests = List.of(
                new ModelRequest("hi", SpecParams.NONE),
                new ModelRequest("2+2? \u00e9\u4e2d\ud83d\ude00 \\ \"q\" \t", new SpecParams(null, 0.0, null, null)),
                new ModelRequest(List.of(new ChatMessage("system", "own system"), ChatMessage.user("1+1?"),
                        ChatMessage.assistant("2"), ChatMessage.user("2+2?")), all),
                new ModelRequest(List.of(ChatMessage.user("list the files")), all,
                        new ToolChat(List.of("bash", "python", "submit"), List.of(assistant, tool))),
                new ModelRequest(List.of(ChatMessage.user("list")), SpecParams.NONE,
                        new ToolChat(List.of("submit"), List.of())));
        for (boolean indented : new boolean[] {false, true}) {
            ObjectMapper mapper = indented ? new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT) : JSON;
            for (ModelRequest request : requests) {
                assertThat(new String(new ChatCompletions(mapper).requestBody("m", request), StandardCharsets.UTF_8))
                        .as("%s, indented %s", request, indented).isEqualTo(treeBody(mapper, "m", request));
            }
        }
    }

    /** The body as ChatCompletions built it before it wrote it field by field: a tree, then written. */
    private static String treeBody(ObjectMapper mapper, String model, ModelRequest request) throws Exception {
        SpecParams p = request.params();
        ObjectNode body = mapper.createObjectNode();
        body.put("model", model);
        ArrayNode messages = body.putArray("messages");
        for (ChatMessage m : SystemMessages.join(p.system(), request.turns())) {
            messages.addObject().put("role", m.role()).put("content", m.content());
        }
        if (request.toolChat() != null) {
            request.toolChat().messages().forEach(messages::add);
            body.set("tools", ToolDefinitions.of(mapper, request.toolChat().tools()));
            body.put("tool_choice", "auto");
        }
        if (p.temperature() != null) {
            body.put("temperature", p.temperature());
        }
        if (p.maxTokens() != null) {
            body.put("max_tokens", p.maxTokens());
        }
        if (p.seed() != null) {
            body.put("seed", p.seed());
        }
        if (p.topP() != null) {
            body.put("top_p", p.topP());
        }
        if (p.stop() != null) {
            ArrayNode stop = body.putArray("stop");
            p.stop().forEach(stop::add);
        }
        if (p.extraBody() != null) {
            for (Map.Entry<String, JsonNode> f : ExtraBody.parse(p.extraBody()).properties()) {
                if (!body.has(f.getKey()) && !ExtraBody.RESERVED.contains(f.getKey())) {
                    body.set(f.getKey(), f.getValue());
                }
            }
        }
        body.put("stream", false);
        return new String(mapper.writeValueAsBytes(body), StandardCharsets.UTF_8);
    }
}

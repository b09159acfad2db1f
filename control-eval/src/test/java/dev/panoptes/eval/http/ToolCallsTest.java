package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.SpecParams;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.ToolChat;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The function-calling JSON of chat completions: a request offers the tools in OpenAI's shape and
 * carries the loop's messages after the vignette's; an answer's tool calls are read as servers
 * send them, ids missing (Ollama) made up and written back into the message, arguments sent as an
 * object (llama.cpp) taken as their text.
 */
class ToolCallsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final ChatCompletions codec = new ChatCompletions(JSON);

    @Test
    void aRequestOffersTheToolsAndCarriesTheLoopsMessagesAfterTheVignettes() throws Exception {
        JsonNode assistant = JSON.readTree("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"a\","
                + "\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\"}\"}}]}");
        JsonNode tool = JSON.readTree("{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"x\\n\"}");
        ModelRequest request = new ModelRequest(List.of(ChatMessage.user("list the files")), SpecParams.NONE,
                new ToolChat(List.of("bash", "submit"), List.of(assistant, tool)));

        JsonNode body = JSON.readTree(codec.requestBody("m", request));

        assertThat(body.get("messages")).hasSize(3);
        assertThat(body.get("messages").get(1)).isEqualTo(assistant);
        assertThat(body.get("messages").get(2)).isEqualTo(tool);
        assertThat(body.get("tools")).hasSize(2);
        JsonNode bash = body.get("tools").get(0);
        assertThat(bash.get("type").asText()).isEqualTo("function");
        assertThat(bash.at("/function/name").asText()).isEqualTo("bash");
        assertThat(bash.at("/function/parameters/required/0").asText()).isEqualTo("cmd");
        assertThat(body.at("/tools/1/function/name").asText()).isEqualTo("submit");
        assertThat(body.get("tool_choice").asText()).isEqualTo("auto");
    }

    @Test
    void aPlainRequestOffersNoTools() throws Exception {
        JsonNode body = JSON.readTree(codec.requestBody("m", new ModelRequest("hi", SpecParams.NONE)));
        assertThat(body.has("tools")).isFalse();
        assertThat(body.has("tool_choice")).isFalse();
    }

    @Test
    void toolCallsAreReadWithTheirIdsAndStringArguments() throws Exception {
        ModelResponse r = codec.parseResponse("{\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\","
                + "\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
                + "\"python\",\"arguments\":\"{\\\"code\\\": \\\"print(1)\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}");

        assertThat(r.toolCalls()).hasSize(1);
        assertThat(r.toolCalls().get(0).id()).isEqualTo("call_1");
        assertThat(r.toolCalls().get(0).name()).isEqualTo("python");
        assertThat(JSON.readTree(r.toolCalls().get(0).arguments()).get("code").asText()).isEqualTo("print(1)");
        assertThat(r.message().at("/tool_calls/0/id").asText()).isEqualTo("call_1");
        assertThat(r.text()).isEmpty();
    }

    @Test
    void missingIdsAreMadeUpAndWrittenIntoTheMessageAndObjectArgumentsAreTakenAsText() throws Exception {
        // Ollama sends no ids; llama.cpp has sent arguments as an object.
        ModelResponse r = codec.parseResponse("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"\","
                + "\"tool_calls\":[{\"function\":{\"name\":\"bash\",\"arguments\":{\"cmd\":\"ls\"}}},"
                + "{\"function\":{\"name\":\"bash\",\"arguments\":{\"cmd\":\"pwd\"}}}]}}]}");

        assertThat(r.toolCalls()).hasSize(2);
        String first = r.toolCalls().get(0).id();
        String second = r.toolCalls().get(1).id();
        assertThat(first).isNotBlank().isNotEqualTo(second);
        assertThat(r.message().at("/tool_calls/0/id").asText()).isEqualTo(first);
        assertThat(r.message().at("/tool_calls/1/id").asText()).isEqualTo(second);
        assertThat(JSON.readTree(r.toolCalls().get(1).arguments()).get("cmd").asText()).isEqualTo("pwd");
    }

    @Test
    void anAnswerWithoutToolCallsHasNone() throws Exception {
        ModelResponse r = codec.parseResponse("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"42\"}}]}");
        assertThat(r.toolCalls()).isEmpty();
        assertThat(r.message()).isNull();
    }
}

package dev.panoptes.eval.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class JsonTreesTest {
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private static JsonNode read(String json) throws Exception {
        try (JsonParser p = MAPPER.createParser(json.getBytes(StandardCharsets.UTF_8))) {
            p.nextToken();
            JsonNode tree = JsonTrees.read(p, MAPPER.getDeserializationConfig().getNodeFactory());
            assertThat(p.nextToken()).as("left at the value's last token").isNull();
            return tree;
        }
    }

    @Test
    void theTreeIsJacksonsOwnNodeForNode() throws Exception {
        List<String> values = List.of(
                "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"4\"},\"logprobs\":null,"
                        + "\"finish_reason\":\"stop\"}",
                "{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":0}}",
                "\"gpt-4o-mini-2024-07-18\"", "null", "true", "false", "0", "-1", "2147483647", "2147483648",
                "-9223372036854775808", "9223372036854775808", "123456789012345678901234567890", "1.5", "-0.0",
                "1e308", "1E-7", "3.141592653589793238462643383279", "[]", "{}", "[[[]],{},[1,[2,[3]]]]",
                "{\"a\":1,\"b\":2,\"a\":3}", "{\"content\":[{\"type\":\"text\",\"text\":\"x\\u00e9\\ud83d\\ude00\"}]}",
                "{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"bash\",\"arguments\":{\"cmd\":\"ls\"}}}]}");
        for (String json : values) {
            JsonNode expected = MAPPER.readTree(json);
            JsonNode tree = read(json);
            assertThat(tree).as(json).isEqualTo(expected);
            assertThat(tree.toString()).as(json).isEqualTo(expected.toString());
            assertThat(tree.getNodeType()).as(json).isEqualTo(expected.getNodeType());
            if (tree.isNumber()) {
                assertThat(tree.numberType()).as(json).isEqualTo(expected.numberType());
            }
        }
    }

    @Test
    void aValueCutShortFailsAsTheParserReportsIt() {
        for (String json : List.of("{\"a\":[1,2", "{\"a\":", "[1,", "{\"a\":{\"b\":\"c\"")) {
            Throwable thrown = catchThrowable(() -> read(json));
            Throwable jackson = catchThrowable(() -> MAPPER.readTree(json));
            assertThat(thrown).as(json).isInstanceOf(JsonProcessingException.class);
            assertThat(((JsonProcessingException) thrown).getOriginalMessage()).as(json)
                    .isEqualTo(((JsonProcessingException) jackson).getOriginalMessage());
        }
    }
}

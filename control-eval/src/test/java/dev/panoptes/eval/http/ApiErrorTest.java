package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class ApiErrorTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Optional<ApiError> parse(String body) {
        return ApiError.parse(JSON, body);
    }

    @Test
    void readsOpenAisEnvelope() {
        ApiError e = parse("{\"error\":{\"message\":\"Invalid 'messages': empty array.\",\"type\":"
                + "\"invalid_request_error\",\"param\":\"messages\",\"code\":\"empty_array\"}}").orElseThrow();
        assertThat(e).isEqualTo(new ApiError("Invalid 'messages': empty array.", "invalid_request_error",
                "empty_array"));
        assertThat(e.describe()).isEqualTo("Invalid 'messages': empty array. (type invalid_request_error, "
                + "code empty_array)");
        assertThat(e.isInsufficientQuota()).isFalse();
    }

    @Test
    void readsVllmsFlatEnvelope() {
        ApiError e = parse("{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 "
                + "tokens.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}").orElseThrow();
        assertThat(e.message()).startsWith("This model's maximum context length");
        assertThat(e.type()).isEqualTo("BadRequestError");
        assertThat(e.code()).isEqualTo("400");
    }

    @Test
    void readsLlamaCppsEnvelopeWithTheStatusAsCode() {
        ApiError e = parse("{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}")
                .orElseThrow();
        assertThat(e.message()).isEqualTo("Loading model");
        assertThat(e.codeAsStatus()).isEqualTo(503);
        assertThat(e.describe()).isEqualTo("Loading model (type unavailable_error, code 503)");
    }

    @Test
    void readsOllamasAndFastApisShapes() {
        assertThat(parse("{\"error\":\"model \\\"llama9\\\" not found, try pulling it first\"}").orElseThrow()
                .describe()).isEqualTo("model \"llama9\" not found, try pulling it first");
        assertThat(parse("{\"detail\":\"Not Found\"}").orElseThrow().message()).isEqualTo("Not Found");
        assertThat(parse("{\"detail\":[{\"msg\":\"field required\"}]}").orElseThrow().message())
                .contains("field required");
    }

    @Test
    void recognisesAnExhaustedQuota() {
        assertThat(parse("{\"error\":{\"message\":\"You exceeded your current quota\",\"type\":"
                + "\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}").orElseThrow()
                .isInsufficientQuota()).isTrue();
    }

    @Test
    void findsNothingInOtherBodies() {
        assertThat(parse("")).isEmpty();
        assertThat(parse(null)).isEmpty();
        assertThat(parse("<html>502 Bad Gateway</html>")).isEmpty();
        assertThat(parse("[1,2]")).isEmpty();
        assertThat(parse("{\"id\":\"x\"}")).isEmpty();
        assertThat(parse("{\"error\":{\"mess")).isEmpty();
        assertThat(new ApiError(null, null, null).describe()).isEqualTo("(no message)");
        assertThat(new ApiError("m", null, "abc").codeAsStatus()).isEqualTo(-1);
    }
}

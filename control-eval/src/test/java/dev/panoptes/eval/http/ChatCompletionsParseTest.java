package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.FailureScope;
import dev.panoptes.eval.ModelResponse;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.message.BasicHttpResponse;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A chat completion is read in one pass over the body's bytes, making trees of the first choice,
 * the model and the usage only: what it skips is still read to its end, so that a body cut short
 * anywhere is malformed (TRANSIENT) rather than taken for an answer, and the shape's checks keep
 * the order, messages and scopes they had when the whole body was one tree.
 */
class ChatCompletionsParseTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final ChatCompletions codec = new ChatCompletions(JSON);

    private static Answer answer(String body, String contentType) {
        BasicHttpResponse head = new BasicHttpResponse(200);
        if (contentType != null) {
            head.addHeader("Content-Type", contentType);
        }
        byte[] bytes = body.getBytes(contentType != null && contentType.contains("iso-8859-1")
                ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
        return new Answer(new Message<HttpResponse, byte[]>(head, bytes));
    }

    @Test
    void theFirstChoiceModelAndUsageAreReadWhateverTheFieldsOrderAndTheOtherChoicesSkipped() throws Exception {
        ModelResponse r = codec.parseResponse(answer("{\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2},"
                + "\"id\":\"x\",\"extra\":{\"nested\":[1,{\"a\":[]}]},\"choices\":[{\"index\":0,\"message\":{\"role\":"
                + "\"assistant\",\"content\":\"Zürich ☃\"},\"finish_reason\":\"stop\"},{\"index\":1,\"message\":"
                + "{\"content\":\"second\"}}],\"model\":\"m-1\",\"system_fingerprint\":null}", "application/json"));

        assertThat(r.text()).isEqualTo("Zürich ☃");
        assertThat(r.finishReason()).isEqualTo("stop");
        assertThat(r.model()).isEqualTo("m-1");
        assertThat(r.usage().promptTokens()).isEqualTo(7);
        assertThat(r.usage().completionTokens()).isEqualTo(2);
    }

    @Test
    void aBodyCutShortAfterTheFirstChoiceIsMalformedNotAnAnswer() {
        String body = "{\"choices\":[{\"message\":{\"content\":\"4\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt";
        assertThatThrownBy(() -> codec.parseResponse(answer(body, null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.TRANSIENT))
                .hasMessageStartingWith("malformed or truncated JSON in the response body (")
                .hasMessageContaining("body starts: {\"choices\"");
    }

    @Test
    void aMalformedBodyIsMalformedEvenWhenItsShapeIsWrongBeforeTheFault() {
        assertThatThrownBy(() -> codec.parseResponse(answer("[1, 2", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.TRANSIENT))
                .hasMessageStartingWith("malformed or truncated JSON");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"choices\":[{\"message\":{\"content\":5}}], x", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.TRANSIENT));
    }

    @Test
    void theShapeChecksKeepTheirMessagesAndScopes() {
        assertThatThrownBy(() -> codec.parseResponse(answer("", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.TRANSIENT))
                .hasMessage("empty response body");
        assertThatThrownBy(() -> codec.parseResponse(answer("[1]", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.WORKER))
                .hasMessage("the response body is not a JSON object; body starts: [1]");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"choices\":[]}", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.JOB))
                .hasMessage("the response's 'choices' array is empty");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"choices\":[null]}", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.WORKER))
                .hasMessage("the response has no object 'choices[0].message'");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"choices\":{}}", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.WORKER))
                .hasMessage("the response has no 'choices' array; body starts: {\"choices\":{}}");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"error\":{\"message\":\"overloaded\",\"code\":\"503\"}}",
                null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.TRANSIENT))
                .hasMessage("the response carries an error instead of 'choices': overloaded (code 503)");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"choices\":[{\"message\":{\"content\":5}}]}", null)))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.WORKER))
                .hasMessage("'choices[0].message.content' is neither text nor null but number");
    }

    @Test
    void aRepeatedChoicesFieldCountsOnceTheLastAsInATree() throws Exception {
        ModelResponse r = codec.parseResponse(answer("{\"choices\":[{\"message\":{\"content\":\"first\"}}],"
                + "\"choices\":[{\"message\":{\"content\":\"last\"}}]}", null));
        assertThat(r.text()).isEqualTo("last");
        assertThatThrownBy(() -> codec.parseResponse(answer("{\"choices\":[{\"message\":{\"content\":\"a\"}}],"
                + "\"choices\":[]}", null)))
                .hasMessage("the response's 'choices' array is empty");
    }

    @Test
    void aBodyInAnotherDeclaredCharsetIsDecodedBeforeItIsParsed() throws Exception {
        ModelResponse r = codec.parseResponse(answer("{\"choices\":[{\"message\":{\"content\":\"café\"}}]}",
                "application/json; charset=iso-8859-1"));
        assertThat(r.text()).isEqualTo("café");
    }
}

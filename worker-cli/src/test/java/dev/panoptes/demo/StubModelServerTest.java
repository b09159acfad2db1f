package dev.panoptes.demo;

import dev.panoptes.control.SpecParams;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class StubModelServerTest {
    @Test
    void answersArithmeticDeterministicallyAndIsWrongOnPurposeForAboutOneInTen() {
        assertThat(StubModelServer.answer("hello")).isEqualTo("re: hello");
        int wrong = 0;
        for (int i = 0; i < 1000; i++) {
            String prompt = "What is " + i + " + 3? Answer with the number only.";
            String answer = StubModelServer.answer(prompt);
            assertThat(StubModelServer.answer(prompt)).isEqualTo(answer);
            if (!answer.equals(Integer.toString(i + 3))) {
                wrong++;
            }
        }
        assertThat(wrong).isBetween(50, 150);
        assertThat(StubModelServer.answer("What is 6 * 7?")).isIn("42", "43");
        assertThat(StubModelServer.answer("What is 5 - 9?")).isIn("-4", "-3");
    }

    @Test
    void speaksTheOpenAiChatCompletionsShapeThatTheRealClientReads() throws Exception {
        try (StubModelServer stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ZERO, 4);
             HttpModelClient client = HttpModelClient.builder(stub.baseUrl(), "stub-model").build()) {
            ModelResponse response = client.complete(new ModelRequest("What is 2 + 2?", SpecParams.NONE));

            assertThat(response.text()).isEqualTo(StubModelServer.answer("What is 2 + 2?"));
            assertThat(response.model()).isEqualTo("stub-model");
            assertThat(response.finishReason()).isEqualTo("stop");
            assertThat(response.usage().promptTokens()).as("words in the prompt").isEqualTo(5);
            assertThat(stub.requestCount()).isEqualTo(1);
        }
    }
}

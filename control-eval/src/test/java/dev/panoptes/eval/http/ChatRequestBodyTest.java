package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
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

import java.time.Duration;
import java.util.List;

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
}

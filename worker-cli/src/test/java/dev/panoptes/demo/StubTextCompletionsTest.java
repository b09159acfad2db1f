package dev.panoptes.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The stub's {@code /v1/completions} and {@code /tokenize}, read as lm-eval and a worker read them. */
class StubTextCompletionsTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void echoesEveryPromptTokenWithItsLogprobOffsetAndTopAndFavoursTheRightAnswer() throws Exception {
        try (StubModelServer stub = start()) {
            String context = "Question: What is 17 + 25?\nAnswer:";
            JsonNode r = post(stub, "/v1/completions", "{\"model\":\"stub-arithmetic\",\"prompt\":[\""
                    + json(context + " 42") + "\",\"" + json(context + " 43") + "\"],\"echo\":true,\"logprobs\":1,"
                    + "\"max_tokens\":1,\"temperature\":0}");

            assertThat(r.get("object").asText()).isEqualTo("text_completion");
            assertThat(r.get("choices")).hasSize(2);
            JsonNode right = r.get("choices").get(0).get("logprobs");
            JsonNode wrong = r.get("choices").get(1).get("logprobs");
            assertThat(r.get("choices").get(0).get("text").asText()).startsWith(context + " 42");
            // One entry per prompt token plus the one generated; the first has no log-probability.
            int promptTokens = StubTokenizer.tokens(context + " 42").size();
            assertThat(right.get("tokens")).hasSize(promptTokens + 1);
            assertThat(right.get("token_logprobs").get(0).isNull()).isTrue();
            assertThat(right.get("top_logprobs").get(0).isNull()).isTrue();
            assertThat(right.get("text_offset").get(0).asInt()).isZero();
            assertThat(right.get("tokens").get(promptTokens - 1).asText()).isEqualTo(" 42");
            assertThat(right.get("text_offset").get(promptTokens - 1).asInt()).isEqualTo(context.length());
            double rightLogprob = right.get("token_logprobs").get(promptTokens - 1).asDouble();
            double wrongLogprob = wrong.get("token_logprobs").get(promptTokens - 1).asDouble();
            // 17 + 25 is not one of the prompts the stub gets wrong on purpose (checked by its chat answer).
            assertThat(StubModelServer.answer("What is 17 + 25?")).isEqualTo("42");
            assertThat(rightLogprob).isGreaterThan(wrongLogprob);
            assertThat(right.get("top_logprobs").get(promptTokens - 1).get(" 42").asDouble()).isEqualTo(rightLogprob);
            // The wrong answer is not the greedy token: the top is the answer.
            assertThat(wrong.get("top_logprobs").get(promptTokens - 1).get(" 42").asDouble())
                    .isGreaterThan(wrongLogprob);
            assertThat(r.get("usage").get("prompt_tokens").asInt()).isEqualTo(2 * promptTokens);
        }
    }

    @Test
    void withoutPromptLogprobsItAnswersAsLlamaCppsServerDoes() throws Exception {
        try (StubModelServer stub = start()) {
            stub.servePromptLogprobs(false);
            JsonNode r = post(stub, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"What is 1 + 1? Answer:\","
                    + "\"echo\":true,\"logprobs\":1,\"max_tokens\":1}");

            JsonNode choice = r.get("choices").get(0);
            assertThat(choice.get("text").asText()).as("echo ignored").doesNotContain("What is");
            assertThat(choice.get("logprobs").has("token_logprobs")).isFalse();
            assertThat(choice.get("logprobs").get("content")).as("the generated token only").hasSize(1);
        }
    }

    @Test
    void tokenizesAsVllmAndLlamaCppServeIt() throws Exception {
        try (StubModelServer stub = start()) {
            JsonNode vllm = post(stub, "/tokenize", "{\"model\":\"m\",\"prompt\":\"Answer: Paris\"}");
            JsonNode llama = post(stub, "/tokenize", "{\"content\":\"Answer: Paris\"}");

            assertThat(vllm.get("count").asInt()).isEqualTo(3);
            assertThat(vllm.get("token_strs").toString()).isEqualTo("[\"Answer\",\":\",\" Paris\"]");
            assertThat(llama.get("tokens")).isEqualTo(vllm.get("tokens"));
        }
    }

    @Test
    void aRequestWithoutPromptIsRefusedWithA400SayingSo() throws Exception {
        try (StubModelServer stub = start()) {
            HttpResponse<String> r = send(stub, "/v1/completions", "{\"model\":\"m\"}");
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(r.body()).contains("prompt is required");
        }
    }

    /**
     * A text completion with prompt log-probabilities costs the stub a millisecond or so of CPU to
     * write. Its one timer thread used to write every answer whose latency was over, so answers
     * were built one at a time whatever the requests in flight, and 64 in flight waited hundreds of
     * milliseconds for a 1 ms latency. Now each answer is built by the handler thread that read its
     * request (as a real server computes while the call runs), and the timer thread only sends it.
     */
    @Test
    void textCompletionsAreBuiltByTheHandlerThreadsNotTheOneTimerThread() throws Exception {
        java.util.Set<Long> before = new java.util.HashSet<>();
        Thread.getAllStackTraces().keySet().forEach(t -> before.add(t.getId()));
        String shots = "Question: What is 8 - 1?\\nAnswer: 7\\n\\nQuestion: What is 10 + 10?\\nAnswer: 20\\n\\n"
                + "Question: What is 39 * 18?\\nAnswer:";
        StringBuilder prompts = new StringBuilder();
        for (String choice : new String[] {"712", "702", "701", "703"}) {
            prompts.append(prompts.length() == 0 ? "" : ",").append('"').append(shots).append(' ').append(choice)
                    .append('"');
        }
        String body = "{\"model\":\"stub-arithmetic\",\"prompt\":[" + prompts + "],\"echo\":true,\"logprobs\":1,"
                + "\"max_tokens\":0}";
        try (StubModelServer stub = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                Duration.ofMillis(1), 64)) {
            URI uri = URI.create(stub.baseUrl() + "/completions");
            HttpRequest request = HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString(body))
                    .header("Content-Type", "application/json").build();
            for (int round = 0; round < 25; round++) {
                java.util.List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> calls =
                        new java.util.ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    calls.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
                }
                for (var call : calls) {
                    assertThat(call.get(30, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                }
            }
            assertThat(stub.requestCount()).isEqualTo(400);
            java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
            long timer = 0;
            long handlers = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (before.contains(t.getId())) {
                    continue;
                }
                long nanos = Math.max(0, cpu.getThreadCpuTime(t.getId()));
                if (t.getName().startsWith("stub-model-timer-")) {
                    timer += nanos;
                } else if (t.getName().matches("stub-model-\\d+")) {
                    handlers += nanos;
                }
            }
            assertThat(handlers).as("the handler threads' CPU (ns)").isPositive();
            assertThat(timer).as("the timer thread's CPU (ns) against the handler threads' %d", handlers)
                    .isLessThan(handlers / 2);
        }
    }

    private static StubModelServer start() throws Exception {
        return StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ZERO, 4);
    }

    private JsonNode post(StubModelServer stub, String path, String body) throws Exception {
        HttpResponse<String> r = send(stub, path, body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return MAPPER.readTree(r.body());
    }

    private HttpResponse<String> send(StubModelServer stub, String path, String body) throws Exception {
        URI base = stub.baseUrl();
        URI uri = path.startsWith("/v1/") ? URI.create(base + path.substring(3)) : base.resolve(path);
        return http.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String json(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}

package dev.panoptes.demo;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.SpecParams;
import dev.panoptes.eval.http.HttpModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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

    @Test
    void aCallWaitingOutItsLatencyHoldsNoThread() throws Exception {
        int calls = 200;
        // Far longer than the test may run: every call that arrives is still waiting out its
        // latency when the last one arrives, however loaded the machine is. (With 500 ms, as
        // before, a machine at load 9 took longer than the latency to deliver 200 requests, and
        // the first were answered before the last arrived: 104 at once, the stub holding none.)
        Duration latency = Duration.ofMinutes(5);
        try (StubModelServer stub = StubModelServer.start(loopback(), latency, calls)) {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                answers.add(client.sendAsync(completion(stub, "What is " + i + " + 1?"),
                        HttpResponse.BodyHandlers.ofString()));
            }

            // Its handler threads are at most one per processor and its timer is one more: were
            // each waiting call to hold a thread, no more than that many could wait at once.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                    .until(() -> stub.peakConcurrency() == calls);
            assertThat(stub.waitingTurn()).as("every call holds a turn, none waits for one").isZero();
            assertThat(answers).as("still waiting out their latency").noneMatch(CompletableFuture::isDone);
            assertThat(stub.requestCount()).as("none answered yet").isZero();
        }
    }

    @Test
    void callsBeyondItsTurnsWaitAndTheirLatencyStartsWhenTheyGetOne() throws Exception {
        int calls = 6;
        Duration latency = Duration.ofMillis(300);
        try (StubModelServer stub = StubModelServer.start(loopback(), latency, 2)) {
            long start = System.nanoTime();
            List<CompletableFuture<HttpResponse<String>>> answers = askAtOnce(stub, calls, 2);
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            for (int i = 0; i < calls; i++) {
                HttpResponse<String> answer = answers.get(i).join();
                assertThat(answer.statusCode()).isEqualTo(200);
                // Written on a handler thread, sent by the timer after the latency: each its own call's.
                assertThat(answer.body()).contains("\"content\":\""
                        + StubModelServer.answer("What is " + i + " + 2?", StubModelServer.MODEL, null) + "\"");
            }
            assertThat(stub.peakConcurrency()).as("answered at once: its two turns").isEqualTo(2);
            assertThat(took).as("three rounds of two calls, each waiting its latency")
                    .isGreaterThanOrEqualTo(latency.multipliedBy(calls / 2));
        }
    }

    @Test
    void closingEndsTheCallsWaitingTheirLatencyOrTheirTurnWithoutAnAnswer() throws Exception {
        StubModelServer stub = StubModelServer.start(loopback(), Duration.ofSeconds(30), 1);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            calls.add(client.sendAsync(completion(stub, "What is " + i + " + 3?"), HttpResponse.BodyHandlers.ofString()));
        }
        // One answering (its 30 s latency running), two waiting for its turn.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> stub.peakConcurrency() == 1 && stub.waitingTurn() == 2);

        long start = System.nanoTime();
        stub.close();

        for (CompletableFuture<HttpResponse<String>> call : calls) {
            assertThat(call).failsWithin(Duration.ofSeconds(10));
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not the 30 s latency").isLessThan(Duration.ofSeconds(10));
        assertThat(stub.waitingTurn()).isZero();
        assertThat(stub.requestCount()).isZero();
    }

    @Test
    void answers429BeyondMaxConcurrentInFlight() throws Exception {
        try (StubModelServer stub = StubModelServer.start(loopback(), Duration.ofSeconds(1), 4, 2)) {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            List<CompletableFuture<HttpResponse<String>>> first = List.of(
                    client.sendAsync(completion(stub, "What is 1 + 1?"), HttpResponse.BodyHandlers.ofString()),
                    client.sendAsync(completion(stub, "What is 2 + 1?"), HttpResponse.BodyHandlers.ofString()));
            // Well within the first two calls' second of latency.
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> stub.peakConcurrency() == 2);

            HttpResponse<String> third = client.send(completion(stub, "What is 3 + 1?"),
                    HttpResponse.BodyHandlers.ofString());

            assertThat(third.statusCode()).isEqualTo(429);
            assertThat(third.body()).isEqualTo("{\"error\":{\"message\":\"Rate limit reached: more than 2 requests in"
                    + " flight\",\"type\":\"rate_limit_error\"}}");
            assertThat(stub.throttledCount()).isEqualTo(1);
            for (CompletableFuture<HttpResponse<String>> answer : first) {
                assertThat(answer.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            }
            assertThat(client.send(completion(stub, "What is 4 + 1?"), HttpResponse.BodyHandlers.ofString())
                    .statusCode()).as("a slot is free again once its answer is out").isEqualTo(200);
            assertThat(stub.requestCount()).isEqualTo(3);
        }
    }

    @Test
    void answers400ContextLengthExceededPastItsContextAndCountsIt() throws Exception {
        try (StubModelServer stub = StubModelServer.start(loopback(), Duration.ofMillis(1), 4)) {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String prompt = "word ".repeat(StubModelServer.CONTEXT_TOKENS - 4) + "What is 3 + 1?";

            HttpResponse<String> answer = client.send(completion(stub, prompt), HttpResponse.BodyHandlers.ofString());

            assertThat(answer.statusCode()).isEqualTo(400);
            assertThat(answer.body()).isEqualTo("{\"error\":{\"message\":\"This model's maximum context length is"
                    + " 32768 tokens. However, you requested 32769 tokens in the messages. Please reduce the length of"
                    + " the messages.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
                    + "\"code\":\"context_length_exceeded\"}}");
            assertThat(stub.refusedCount()).isEqualTo(1);
            assertThat(stub.requestCount()).isZero();
            stub.resetPeakConcurrency();
            assertThat(stub.peakConcurrency()).as("nothing left counted in flight").isZero();
        }
    }

    @Test
    void writesTheCompletionJsonThatTheObjectTreeWrote() {
        ObjectMapper mapper = new ObjectMapper();
        for (String s : List.of("", "4", "re: What is \"x\"?\n\tA\\B / C", "\000\001\037\177\u00E9\u2028\uD83D\uDE00",
                "<script>&'</script>", "\b\f\r")) {
            Completion completion = new Completion("model " + s, "text " + s, 3, 1);

            ObjectNode response = mapper.createObjectNode();
            response.put("id", "chatcmpl-" + 17);
            response.put("object", "chat.completion");
            response.put("created", 1_700_000_000L);
            response.put("model", completion.model());
            ObjectNode choice = response.putArray("choices").addObject();
            choice.put("index", 0);
            choice.putObject("message").put("role", "assistant").put("content", completion.text());
            choice.put("finish_reason", "stop");
            response.putObject("usage").put("prompt_tokens", 3).put("completion_tokens", 1).put("total_tokens", 4);

            assertThat(completion.json(17, 1_700_000_000L)).isEqualTo(response.toString());
        }
    }

    @Test
    void readsRequestsAsTheObjectTreeReadThem() {
        ObjectMapper mapper = new ObjectMapper();
        List<String> bodies = List.of("", "  ", "[]", "5", "null", "{", "{\"messages\": [", "not json",
                "{}", "{\"messages\": []}", "{\"messages\": 5}", "{\"messages\": {\"content\": \"x\"}}",
                "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"What is 2 + 2?\"}]}",
                "{\"messages\": [{\"content\": \"a b\"}, {\"content\": \" c  d\\te \"}], \"seed\": 7, \"model\": \"x\"}",
                "{\"messages\": [\"text\", 5, null, [1], {\"content\": null}]}",
                "{\"messages\": [{\"content\": 12.50}, {\"content\": [{\"type\": \"text\", \"text\": \"hi\"}]}]}",
                "{\"messages\": [{\"content\": true}], \"model\": null, \"seed\": null}",
                "{\"messages\": [{\"content\": \"x\"}], \"model\": 12, \"seed\": \"42\"}",
                "{\"messages\": [{\"content\": \"x\"}], \"model\": {\"a\": 1}, \"seed\": 2.9}",
                "{\"messages\": [{\"content\": \"x\"}], \"model\": [\"a\"], \"seed\": true}",
                "{\"messages\": [{\"content\": \"x\"}], \"seed\": \"not a number\"}",
                "{\"messages\": [{\"content\": \"x\"}], \"seed\": 99999999999999999999}",
                "{\"messages\": [{\"content\": \"a\", \"content\": \"b c\"}], \"model\": \"1\", \"model\": \"2\"}",
                "{\"messages\": [{\"content\": \"a\"}], \"messages\": 1}",
                "{\"messages\": 1, \"messages\": [{\"content\": \"a\"}]}",
                "{\"messages\": [{\"content\": \"a\"}], \"extra\": {\"deep\": [1, {\"x\": null}]}} trailing",
                "{\"messages\": [{\"content\": \"a\"}], \"extra\": [1, 2}",
                "{\"messages\": [{\"content\": \"\\u00e9t\\u00e9 \\ud83d\\ude00\"}]}");
        for (String body : bodies) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            assertThat(streamed(mapper, bytes)).as(body).isEqualTo(asTree(mapper, bytes));
        }
    }

    @Test
    void countsWordsAsTrimAndSplitCountedThem() {
        Random random = new Random(7);
        char[] alphabet = {'a', 'b', ' ', '\t', '\n', '\r', '\f', '\013', '\000', '\001', '\037', '\u00A0',
            '\u2003', '.'};
        for (int i = 0; i < 20_000; i++) {
            char[] text = new char[random.nextInt(12)];
            for (int j = 0; j < text.length; j++) {
                text[j] = alphabet[random.nextInt(alphabet.length)];
            }
            String s = new String(text);
            assertThat(WordCount.of(s)).as("words in [%s]", s).isEqualTo(splitWords(s));
        }
    }

    /** Sends "What is i + addend?" for i below {@code calls} all at once and waits for every answer. */
    private static List<CompletableFuture<HttpResponse<String>>> askAtOnce(StubModelServer stub, int calls,
                                                                           int addend) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            answers.add(client.sendAsync(completion(stub, "What is " + i + " + " + addend + "?"),
                    HttpResponse.BodyHandlers.ofString()));
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        return answers;
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    private static HttpRequest completion(StubModelServer stub, String prompt) {
        ObjectNode body = new ObjectMapper().createObjectNode().put("model", StubModelServer.MODEL);
        body.putArray("messages").addObject().put("role", "user").put("content", prompt);
        return HttpRequest.newBuilder(URI.create(stub.baseUrl() + "/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
    }

    /** What {@link ChatRequest#read} makes of a body, as a line to compare. */
    private static String streamed(ObjectMapper mapper, byte[] body) {
        try (JsonParser json = mapper.createParser(new ByteArrayInputStream(body))) {
            ChatRequest request = ChatRequest.read(json);
            return request == null ? "messages is required"
                    : request.model() + "|" + request.seed() + "|" + request.prompt() + "|" + request.promptTokens();
        } catch (IOException e) {
            return "body is not JSON";
        }
    }

    /** What the stub made of a body when it read it as a tree, as a line to compare. */
    private static String asTree(ObjectMapper mapper, byte[] bytes) {
        JsonNode body;
        try {
            body = mapper.readTree(new ByteArrayInputStream(bytes));
        } catch (IOException e) {
            return "body is not JSON";
        }
        JsonNode messages = body == null ? null : body.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            return "messages is required";
        }
        String prompt = messages.get(messages.size() - 1).path("content").asText("");
        String model = body.path("model").asText("stub");
        Long seed = body.hasNonNull("seed") ? body.get("seed").asLong() : null;
        int promptTokens = 0;
        for (JsonNode m : messages) {
            promptTokens += splitWords(m.path("content").asText(""));
        }
        return model + "|" + seed + "|" + prompt + "|" + promptTokens;
    }

    private static int splitWords(String s) {
        String trimmed = s.trim();
        return trimmed.isEmpty() ? 0 : trimmed.split("\\s+").length;
    }
}

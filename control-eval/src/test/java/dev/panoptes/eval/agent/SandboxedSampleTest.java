package dev.panoptes.eval.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.SandboxTask;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Transcripts;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.ToolCall;
import dev.panoptes.eval.sandbox.SandboxLimits;
import dev.panoptes.eval.sandbox.Sandboxes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tool loop of one sample in its sandbox, against a scripted model: each tool call runs in
 * the sandbox and the model sees its output (cut to 16 KiB, marked) and exit status in a
 * {@code role: tool} message after its own assistant message, unchanged; a tool that errors is
 * shown to the model; a limit ends the sample with the limit in its transcript; {@code submit}
 * ends it with its answer; a code answer is checked in the sandbox.
 */
class SandboxedSampleTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Sandboxes sandboxes;

    @BeforeAll
    static void start() throws InterruptedException {
        sandboxes = Sandboxes.onPath(System.getenv("PATH"), SandboxLimits.defaults()
                .withCommandTimeout(Duration.ofSeconds(10)), 2);
        assertThat(sandboxes.check()).as("this machine must run sandboxes (bubblewrap is a prerequisite)").isNull();
    }

    @AfterAll
    static void stop() {
        sandboxes.close();
    }

    @Test
    void eachToolCallRunsInTheSandboxAndTheModelSeesItsOutputAfterItsOwnMessageUnchanged() throws Exception {
        Scripted model = new Scripted(turn -> switch (turn) {
            case 0 -> calls(call("c1", "bash", "{\"cmd\": \"echo hello > f.txt; cat f.txt; exit 3\"}"));
            case 1 -> calls(call("c2", "python", "{\"code\": \"print(open('f.txt').read().strip() * 2)\"}"));
            default -> answer("hellohello");
        });
        Vignette v = vignette("say it twice", new SandboxTask(List.of("bash", "python"), 5, null, null, null, null,
                null, null));

        ModelResponse r = new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE);

        assertThat(r.text()).isEqualTo("hellohello");
        assertThat(model.requests).hasSize(3);
        ModelRequest second = model.requests.get(1);
        assertThat(second.toolChat().tools()).containsExactly("bash", "python");
        assertThat(second.toolChat().messages()).hasSize(2);
        assertThat(second.toolChat().messages().get(0)).isEqualTo(model.sent.get(0));
        JsonNode tool = second.toolChat().messages().get(1);
        assertThat(tool.get("role").asText()).isEqualTo("tool");
        assertThat(tool.get("tool_call_id").asText()).isEqualTo("c1");
        assertThat(tool.get("content").asText()).isEqualTo("hello\n\n[exit status 3]");
        JsonNode third = model.requests.get(2).toolChat().messages().get(3);
        assertThat(third.get("content").asText()).isEqualTo("hellohello\n");

        JsonNode transcript = JSON.readTree(r.transcript());
        assertThat(transcript.get("turns").asInt()).isEqualTo(3);
        assertThat(transcript.get("tokens").asLong()).isEqualTo(3 * 15);
        assertThat(r.usage()).isEqualTo(new Usage(30, 15));
        List<JsonNode> tools = events(transcript, "tool");
        assertThat(tools).hasSize(2);
        assertThat(tools.get(0).get("exitStatus").asInt()).isEqualTo(3);
        assertThat(tools.get(0).get("durationMs").asLong()).isGreaterThanOrEqualTo(0);
        assertThat(tools.get(1).get("exitStatus").asInt()).isZero();
        assertThat(events(transcript, "model")).hasSize(3);
        // The chat as sent: the user's turn, then assistant, tool, assistant, tool, assistant.
        assertThat(transcript.get("messages")).hasSize(6);
        assertThat(transcript.has("limit")).isFalse();
    }

    @Test
    void aToolsOutputPast16KiBIsCutForTheModelAndTheCutIsMarked() throws Exception {
        Scripted model = new Scripted(turn -> turn == 0
                ? calls(call("c1", "bash", "{\"cmd\": \"head -c 100000 /dev/zero | tr '\\\\0' x\"}"))
                : answer("done"));
        Vignette v = vignette("print a lot", new SandboxTask(List.of("bash"), 5, null, null, null, null, null, null));

        ModelResponse r = new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE);

        String shown = model.requests.get(1).toolChat().messages().get(1).get("content").asText();
        assertThat(shown.getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isLessThanOrEqualTo(16 * 1024);
        assertThat(shown).contains("bytes of output cut here").startsWith("xxxx").endsWith("xxxx");
        JsonNode tool = events(JSON.readTree(r.transcript()), "tool").get(0);
        assertThat(tool.get("truncated").asBoolean()).isTrue();
        assertThat(tool.get("output").asText()).isEqualTo(shown);
    }

    @Test
    void aToolThatCannotRunIsAnErrorTheModelReadsAndTheLoopGoesOn() throws Exception {
        Scripted model = new Scripted(turn -> switch (turn) {
            case 0 -> calls(call("c1", "curl", "{\"url\": \"http://example.com\"}"),
                    call("c2", "bash", "{\"command\": \"ls\"}"), call("c3", "python", "not json"));
            default -> answer("gave up");
        });
        Vignette v = vignette("try", new SandboxTask(List.of("bash", "python"), 5, null, null, null, null, null, null));

        ModelResponse r = new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE);

        assertThat(r.text()).isEqualTo("gave up");
        List<JsonNode> loop = model.requests.get(1).toolChat().messages();
        assertThat(loop.get(1).get("content").asText()).contains("there is no tool 'curl'");
        assertThat(loop.get(2).get("content").asText()).contains("must be a JSON object with a string 'cmd'");
        assertThat(loop.get(3).get("content").asText()).contains("must be a JSON object with a string 'code'");
        assertThat(events(JSON.readTree(r.transcript()), "tool")).allMatch(e -> e.has("error"));
    }

    @Test
    void aSampleThatMeetsItsTurnLimitEndsWithTheLimitRecordedNotAFailure() throws Exception {
        Scripted model = new Scripted(turn -> calls(call("c" + turn, "bash", "{\"cmd\": \"echo again\"}")));
        Vignette v = vignette("loop", new SandboxTask(List.of("bash"), 3, null, null, null, null, null,
                "test -f never"));

        ModelResponse r = new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE);

        assertThat(model.requests).hasSize(3);
        assertThat(Transcripts.limit(r.transcript())).isEqualTo("turns");
        assertThat(Transcripts.checkPassed(r.transcript())).isFalse();
        assertThat(new RunScoring("exact").score(v, r.record(v.id())).score()).isEqualTo(0.0);
        assertThat(new RunScoring("exact").score(v, r.record(v.id())).explanation())
                .contains("met its turns limit");
    }

    @Test
    void submitEndsTheSampleWithItsAnswerAndTheCheckSeesTheWorkFolder() throws Exception {
        Scripted model = new Scripted(turn -> switch (turn) {
            case 0 -> calls(call("c1", "bash", "{\"cmd\": \"sort -n numbers.txt | tail -n 1 > answer.txt\"}"));
            case 1 -> calls(call("c2", "submit", "{\"answer\": \"907\"}"), call("c3", "bash", "{\"cmd\": \"rm *\"}"));
            default -> throw new AssertionError("no turn after submit");
        });
        SandboxTask task = new SandboxTask(List.of("bash", "submit"), 5, null, Duration.ofSeconds(60),
                Map.of("numbers.txt", "12\n907\n-4\n"), List.of("test -f numbers.txt"), null,
                "test \"$(cat answer.txt)\" = 907");
        Vignette v = vignette("largest", task);

        ModelResponse r = new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE);

        assertThat(r.text()).isEqualTo("907");
        assertThat(model.requests).hasSize(2);
        assertThat(Transcripts.checkPassed(r.transcript())).isTrue();
        assertThat(events(JSON.readTree(r.transcript()), "setup")).hasSize(1);
        assertThat(new RunScoring("exact").score(v, r.record(v.id())).score()).isEqualTo(1.0);
    }

    @Test
    void aCodeAnswerIsWrittenToItsFileAndPassesOnlyWhenTheTestsExitZero() throws Exception {
        SandboxTask task = new SandboxTask(List.of(), 1, null, null,
                Map.of("test_solution.py", "from solution import add\nassert add(2, 3) == 5\n"), null, "solution.py",
                "python3 test_solution.py");
        Vignette v = vignette("Write add(a, b)", task);
        ModelResponse right = new SandboxedSample(new Scripted(turn -> answer(
                "Sure:\n```python\ndef add(a, b):\n    return a + b\n```\n")), sandboxes).run(v, SpecParams.NONE);
        ModelResponse wrong = new SandboxedSample(new Scripted(turn -> answer(
                "```python\ndef add(a, b):\n    return a - b\n```")), sandboxes).run(v, SpecParams.NONE);

        assertThat(Transcripts.checkPassed(right.transcript())).isTrue();
        assertThat(Transcripts.checkPassed(wrong.transcript())).isFalse();
        assertThat(Transcripts.checkSummary(wrong.transcript())).contains("AssertionError");
    }

    @Test
    void aWorkerWithoutSandboxesFailsTheSampleAsItsOwnFaultAndRunsNothing() {
        Scripted model = new Scripted(turn -> answer("never asked"));
        Vignette v = vignette("x", new SandboxTask(List.of("bash"), 5, null, null, null, null, null, null));

        assertThatThrownBy(() -> new SandboxedSample(model, null).run(v, SpecParams.NONE))
                .isInstanceOf(WorkerFaultException.class).hasMessageContaining("runs in a sandbox and this worker runs none");
        assertThat(model.requests).isEmpty();
    }

    @Test
    void aServerThatRefusesToolChoiceIsThisWorkersFaultSaidSo() {
        // vLLM without its tool parser answers 400; the client makes that the vignette's failure.
        Scripted model = new Scripted(turn -> {
            throw new dev.panoptes.control.JobFailedException("HTTP 400: \"auto\" tool choice requires"
                    + " --enable-auto-tool-choice and --tool-call-parser to be set (type BadRequestError)");
        });
        Vignette v = vignette("x", new SandboxTask(List.of("bash"), 5, null, null, null, null, null, null));

        assertThatThrownBy(() -> new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE))
                .isInstanceOf(WorkerFaultException.class)
                .hasMessageContaining("this worker's model API refuses tool calls")
                .hasMessageContaining("--enable-auto-tool-choice");
    }

    @Test
    void anotherRefusalOfATurnStaysTheVignettesOwn() {
        Scripted model = new Scripted(turn -> {
            throw new dev.panoptes.control.JobFailedException("HTTP 400: maximum context length is 8192 tokens");
        });
        Vignette v = vignette("x", new SandboxTask(List.of("bash"), 5, null, null, null, null, null, null));

        assertThatThrownBy(() -> new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE))
                .isInstanceOf(dev.panoptes.control.JobFailedException.class);
    }

    private static Vignette vignette(String prompt, SandboxTask task) {
        return new Vignette("v1", prompt, null, Map.of(), List.of(), null, null, task);
    }

    private static List<JsonNode> events(JsonNode transcript, String type) {
        List<JsonNode> out = new ArrayList<>();
        transcript.get("events").forEach(e -> {
            if (e.get("type").asText().equals(type)) {
                out.add(e);
            }
        });
        return out;
    }

    private static ToolCall call(String id, String name, String arguments) {
        return new ToolCall(id, name, arguments);
    }

    private static ModelResponse calls(ToolCall... calls) {
        ObjectNode message = JSON.createObjectNode().put("role", "assistant").putNull("content");
        for (ToolCall c : calls) {
            message.withArray("tool_calls").addObject().put("id", c.id()).put("type", "function")
                    .putObject("function").put("name", c.name()).put("arguments", c.arguments());
        }
        return new ModelResponse("", "tool_calls", "m", new Usage(10, 5), 1, List.of(calls), message);
    }

    private static ModelResponse answer(String text) {
        return new ModelResponse(text, "stop", "m", new Usage(10, 5), 1);
    }

    /** A model that answers turn n with script(n), and keeps what it was asked and what it sent. */
    private static final class Scripted implements ModelClient {
        final List<ModelRequest> requests = Collections.synchronizedList(new ArrayList<>());
        final List<JsonNode> sent = Collections.synchronizedList(new ArrayList<>());
        private final Function<Integer, ModelResponse> script;

        Scripted(Function<Integer, ModelResponse> script) {
            this.script = script;
        }

        @Override
        public ModelResponse complete(ModelRequest request) {
            requests.add(request);
            ModelResponse r = script.apply(requests.size() - 1);
            if (r.message() != null) {
                sent.add(r.message());
            }
            return r;
        }

        @Override
        public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
            return CompletableFuture.completedFuture(complete(request));
        }
    }
}

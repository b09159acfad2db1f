package dev.panoptes.eval.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.SandboxTask;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.ToolCall;
import dev.panoptes.eval.ToolChat;
import dev.panoptes.eval.sandbox.CommandResult;
import dev.panoptes.eval.sandbox.Sandbox;
import dev.panoptes.eval.sandbox.Sandboxes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs one vignette that declares a {@link SandboxTask}, in a fresh sandbox of its own: seeds the
 * work folder with the vignette's files and setup commands, then either asks the model once (no
 * tools: a code problem) or runs the tool loop (chat request with {@code tools}, each
 * {@code tool_calls} entry run in the sandbox, the assistant message sent back unchanged with one
 * {@code role: tool} message per call, again, until the model answers without a tool call, calls
 * {@code submit}, or meets a limit), then runs the vignette's check against the answer, and
 * closes the sandbox. Everything that happened is in the transcript.
 *
 * <p>Who fails: a tool that errors is part of the transcript and the model sees the error; a
 * sample that meets a limit ends with its answer so far and the limit in its transcript (the
 * vignette's outcome); a setup command that fails is the vignette's own failure
 * ({@link SandboxSetupException}, a {@link JobFailedException}: the same files fail anywhere);
 * a sandbox that cannot be built is this worker's ({@link dev.panoptes.eval.sandbox.SandboxUnavailableException}); a failing model
 * call fails as {@link ModelClient#complete} does.
 *
 * <p>Blocking: runs on the calling thread, which must not be a selector thread. Thread-safe; one
 * instance serves a worker.
 */
public final class SandboxedSample {
    /** What the model is shown of a tool's output at most, the cut marked. */
    public static final int MODEL_OUTPUT_BYTES = 16 * 1024;
    private static final Logger log = LoggerFactory.getLogger(SandboxedSample.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern FENCE = Pattern.compile("```[A-Za-z0-9_+-]*[ \\t]*\\n(.*?)```", Pattern.DOTALL);

    private final ModelClient client;
    private final Sandboxes sandboxes;

    /**
     * @param client    the model client the turns go through
     * @param sandboxes the worker's sandboxes, or null when this worker runs none (then every
     *                  sandboxed vignette fails as this worker's fault, and goes elsewhere)
     */
    public SandboxedSample(ModelClient client, Sandboxes sandboxes) {
        this.client = client;
        this.sandboxes = sandboxes;
    }

    /**
     * Runs the vignette in a fresh sandbox.
     *
     * @return the final answer, with the usage summed over its turns, the sample's wall time as
     *         its latency, and its transcript
     * @throws dev.panoptes.eval.sandbox.SandboxUnavailableException when this worker cannot build
     *                                                             a sandbox (its fault)
     * @throws SandboxSetupException when a file or setup command of the vignette fails (its
     *                               failure: the same would fail on any worker)
     * @throws InterruptedException when the thread is interrupted; the sandbox is closed
     */
    public ModelResponse run(Vignette v, SpecParams params) throws InterruptedException {
        SandboxTask task = v.sandbox();
        if (sandboxes == null) {
            throw new dev.panoptes.eval.sandbox.SandboxUnavailableException("vignette '" + v.id() + "' runs in a"
                    + " sandbox and this worker runs none (started with --sandboxes 0, or it cannot build one: see"
                    + " its start-up log)");
        }
        long start = System.nanoTime();
        Transcript transcript = new Transcript();
        transcript.start(v.turns());
        if (task.hasTools()) {
            transcript.tools(task.tools());
        }
        try (Sandbox sandbox = sandboxes.open()) {
            seed(v, task, sandbox, transcript);
            ModelResponse answer = task.hasTools()
                    ? loop(v, task, params, sandbox, transcript, start)
                    : once(v, params, transcript);
            if (task.check() != null) {
                check(task, answer.text(), sandbox, transcript);
            }
            long ms = (System.nanoTime() - start) / 1_000_000;
            return new ModelResponse(answer.text(), answer.finishReason(), answer.model(), transcript.usage(), ms,
                    List.of(), null, transcript.json());
        }
    }

    private void seed(Vignette v, SandboxTask task, Sandbox sandbox, Transcript transcript) {
        for (var f : task.files().entrySet()) {
            CommandResult r = sandbox.writeFile(f.getKey(), f.getValue().getBytes(StandardCharsets.UTF_8));
            if (!r.succeeded()) {
                throw new SandboxSetupException("vignette '" + v.id() + "': cannot write its file '" + f.getKey()
                        + "' into the sandbox: exit status " + r.exitStatus() + ", " + r.output().strip()
                        + (r.failure() == null ? "" : " (" + r.failure() + ")"));
            }
        }
        for (String command : task.setup()) {
            CommandResult r = sandbox.run(command);
            transcript.setup(command, r);
            if (!r.succeeded()) {
                throw new SandboxSetupException("vignette '" + v.id() + "': its setup command '" + command
                        + "' failed with exit status " + r.exitStatus() + (r.timedOut() ? " (timed out)" : "")
                        + ": " + CommandResult.cut(r.output(), 512).strip() + "; fix the suite's sandbox.setup");
            }
        }
    }

    private ModelResponse once(Vignette v, SpecParams params, Transcript transcript) throws InterruptedException {
        ModelResponse r = client.complete(new ModelRequest(v.turns(), params));
        transcript.model(r);
        return r;
    }

    private ModelResponse loop(Vignette v, SandboxTask task, SpecParams params, Sandbox sandbox,
                               Transcript transcript, long start) throws InterruptedException {
        List<JsonNode> loop = new ArrayList<>();
        ModelResponse last = null;
        Long deadline = task.wallTime() == null ? null : start + task.wallTime().toNanos();
        while (true) {
            if (transcript.turns() >= task.maxTurns()) {
                transcript.limit("turns");
                return last;
            }
            if (deadline != null && System.nanoTime() - deadline >= 0) {
                transcript.limit("time");
                return last == null ? new ModelResponse("", null, null, null, 0) : last;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("sample '" + v.id() + "' interrupted between turns");
            }
            ModelResponse r = toolTurn(new ModelRequest(v.turns(), params, new ToolChat(task.tools(), loop)));
            transcript.model(r);
            last = r;
            if (r.toolCalls().isEmpty()) {
                return r;
            }
            loop.add(r.message());
            String submitted = null;
            for (ToolCall call : r.toolCalls()) {
                if (submitted != null) {
                    loop.add(transcript.tool(call, null, "not run: the answer was submitted before this call", null));
                    continue;
                }
                if (call.name().equals("submit") && task.tools().contains("submit")) {
                    String answer = argument(call, "answer");
                    submitted = answer == null ? call.arguments() : answer;
                    loop.add(transcript.tool(call, null, "submitted", null));
                    continue;
                }
                loop.add(runTool(call, task, sandbox, transcript, deadline));
            }
            if (submitted != null) {
                return new ModelResponse(submitted, "submit", r.model(), r.usage(), r.latencyMs());
            }
            if (task.maxTokens() != null && transcript.tokens() >= task.maxTokens()) {
                transcript.limit("tokens");
                return r;
            }
        }
    }

    /**
     * One turn of the loop. A server that refuses tool calls altogether (vLLM started without
     * {@code --enable-auto-tool-choice}: HTTP 400 about {@code tool_choice} or its tool parser)
     * would refuse them from any sample: that is this worker's fault, not the vignette's, and is
     * said so, so the job goes to a worker whose server takes tools.
     */
    private ModelResponse toolTurn(ModelRequest request) throws InterruptedException {
        try {
            return client.complete(request);
        } catch (JobFailedException e) {
            String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(java.util.Locale.ROOT);
            if (m.contains("tool") && (m.contains("tool_choice") || m.contains("tool choice")
                    || m.contains("tool-call-parser") || m.contains("tool parser"))) {
                throw new dev.panoptes.control.WorkerFaultException("this worker's model API refuses tool calls,"
                        + " which tool-using vignettes need (vLLM: start it with --enable-auto-tool-choice and"
                        + " --tool-call-parser); the server said: " + e.getMessage(), e);
            }
            throw e;
        }
    }

    /** Runs one tool call in the sandbox; a call that cannot run gets an error the model reads. */
    private JsonNode runTool(ToolCall call, SandboxTask task, Sandbox sandbox, Transcript transcript, Long deadline) {
        String parameter = switch (call.name()) {
            case "bash" -> "cmd";
            case "python" -> "code";
            default -> null;
        };
        if (parameter == null || !task.tools().contains(call.name())) {
            String error = "error: there is no tool '" + call.name() + "'; the tools are " + String.join(", ",
                    task.tools());
            return transcript.tool(call, null, error, error);
        }
        String code = argument(call, parameter);
        if (code == null) {
            String error = "error: the arguments of " + call.name() + " must be a JSON object with a string '"
                    + parameter + "', got: " + CommandResult.cut(call.arguments(), 512);
            return transcript.tool(call, null, error, error);
        }
        String command = call.name().equals("bash") ? code
                : "printf %s " + Base64.getEncoder().encodeToString(code.getBytes(StandardCharsets.UTF_8))
                        + " | base64 -d > /tmp/.panoptes-tool.py && python3 /tmp/.panoptes-tool.py";
        Duration timeout = sandbox.limits().commandTimeout();
        if (deadline != null) {
            long left = deadline - System.nanoTime();
            timeout = left <= 1_000_000_000L ? Duration.ofSeconds(1) : timeout.compareTo(Duration.ofNanos(left)) < 0
                    ? timeout : Duration.ofNanos(left);
        }
        CommandResult r = sandbox.run(command, timeout);
        String shown = r.outputForModel(MODEL_OUTPUT_BYTES);
        String status = r.failure() != null ? "\n[the sandbox ended: " + r.failure() + "]"
                : r.timedOut() ? "\n[killed: the command ran past its time limit of " + timeout.toSeconds() + " s]"
                : r.exitStatus() != 0 ? "\n[exit status " + r.exitStatus() + "]" : "";
        log.debug("tool {} exited {} in {} ms", call.name(), r.exitStatus(), r.duration().toMillis());
        return transcript.tool(call, r, shown + status, null);
    }

    /** The string argument {@code name} of a call, or null when its arguments hold none. */
    private static String argument(ToolCall call, String name) {
        try {
            JsonNode args = JSON.readTree(call.arguments());
            if (args != null && args.path(name).isTextual()) {
                return args.get(name).asText();
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private static void check(SandboxTask task, String answer, Sandbox sandbox, Transcript transcript) {
        if (task.answerFile() != null) {
            CommandResult w = sandbox.writeFile(task.answerFile(), code(answer).getBytes(StandardCharsets.UTF_8));
            if (!w.succeeded()) {
                transcript.check("write the answer to " + task.answerFile(), w);
                return;
            }
        }
        transcript.check(task.check(), sandbox.run(task.check()));
    }

    /**
     * The code in an answer: its last fenced code block ({@code ```python ... ```}), or the whole
     * answer when it has none.
     */
    static String code(String answer) {
        Matcher m = FENCE.matcher(answer);
        String code = null;
        while (m.find()) {
            code = m.group(1);
        }
        return code != null ? code : answer;
    }
}

package dev.panoptes.eval.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.SandboxTask;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.ToolCall;
import dev.panoptes.eval.sandbox.SandboxLimits;
import dev.panoptes.eval.sandbox.Sandboxes;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a model's tool calls try, at the level of the tool loop: reach the network (the worker's
 * loopback included), read the worker's environment, home and {@code /proc}, write outside the
 * work folder, sleep forever, leave a process behind, allocate 10 GB, fill the disk, fork-bomb. Each is contained, the sample ends with
 * what happened in its transcript, and the next sample on the same worker runs as if nothing had.
 */
class ToolLoopSecurityTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void whatAToolCallTriesIsContainedAndInTheTranscriptAndTheNextSampleGoesOn() throws Exception {
        long worker = ProcessHandle.current().pid();
        // 3 s per command, so that "sleep 1000" is killed soon; and a 16 MiB work folder, so that
        // filling it is quick: with the default 256 MiB, writing it took past 3 s on a loaded
        // machine and the disk-filling command was killed for its time instead of failing for space.
        SandboxLimits limits = SandboxLimits.defaults().withCommandTimeout(Duration.ofSeconds(3))
                .withWorkBytes(16L * 1024 * 1024);
        try (ServerSocket coordinator = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Sandboxes sandboxes = Sandboxes.onPath(System.getenv("PATH"), limits, 2)) {
            assertThat(sandboxes.check()).as("this machine must run sandboxes").isNull();
            int port = coordinator.getLocalPort();
            List<String> attempts = List.of(
                    "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo REACHED || echo unreachable",
                    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', " + port
                            + "), 2)\" && echo REACHED || echo unreachable",
                    "env; echo HOME=$HOME",
                    "cat /proc/" + worker + "/environ && echo REACHED || echo no-worker-proc",
                    "ls " + System.getProperty("user.home") + " && echo REACHED || echo no-home",
                    "echo x > /usr/pwned && echo REACHED; echo x > /etc/pwned && echo REACHED; echo done-writing",
                    "sleep 1000 & echo left-behind",
                    "sleep 1000",
                    "python3 -c 'x = bytearray(10 * 1024 ** 3)'",
                    "head -c 64M /dev/zero > big; ls -l big | cut -d' ' -f5",
                    "bomb() { bomb | bomb & }; bomb; sleep 2",
                    "echo still-here");
            Scripted model = new Scripted(attempts);
            Vignette v = new Vignette("evil", "do harm", null, Map.of(), List.of(), null, null,
                    new SandboxTask(List.of("bash"), 20, null, null, null, null, null, null));

            ModelResponse r = new SandboxedSample(model, sandboxes).run(v, SpecParams.NONE);

            List<JsonNode> tools = new ArrayList<>();
            JSON.readTree(r.transcript()).get("events").forEach(e -> {
                if (e.get("type").asText().equals("tool")) {
                    tools.add(e);
                }
            });
            assertThat(tools).hasSize(attempts.size());
            assertThat(tools).allSatisfy(t -> assertThat(t.get("output").asText()).doesNotContain("REACHED"));
            assertThat(tools.get(0).get("output").asText()).contains("unreachable");
            assertThat(tools.get(1).get("output").asText()).contains("unreachable");
            assertThat(tools.get(2).get("output").asText()).doesNotContain("PANOPTES").doesNotContain("API_KEY")
                    .contains("HOME=/work");
            assertThat(tools.get(3).get("output").asText()).contains("no-worker-proc");
            assertThat(tools.get(4).get("output").asText()).contains("no-home");
            assertThat(tools.get(5).get("output").asText()).contains("Read-only file system").contains("done-writing");
            assertThat(Files.exists(Path.of("/usr/pwned"))).isFalse();
            assertThat(tools.get(6).get("exitStatus").asInt()).isZero();
            assertThat(tools.get(7).get("timedOut").asBoolean()).isTrue();
            assertThat(tools.get(7).get("output").asText()).contains("killed: the command ran past its time limit");
            assertThat(tools.get(8).get("output").asText()).contains("MemoryError");
            assertThat(tools.get(9).get("output").asText()).contains("No space left on device");
            assertThat(Long.parseLong(tools.get(9).get("output").asText().strip().lines().reduce((a, b) -> b)
                    .orElseThrow())).isLessThanOrEqualTo(limits.workBytes());
            assertThat(tools.get(11).get("output").asText()).isEqualTo("still-here\n");
            // The model's last turn, after the sleep was killed, was answered.
            assertThat(r.text()).isEqualTo("done");

            // The worker goes on: the next sample's sandbox is fresh, and nothing was left running.
            Scripted next = new Scripted(List.of("ps -e -o comm= | grep -c sleep || true; ls -A /work | wc -l"));
            ModelResponse after = new SandboxedSample(next, sandboxes).run(new Vignette("ok", "check", null, Map.of(),
                    List.of(), null, null, new SandboxTask(List.of("bash"), 5, null, null, null, null, null, null)),
                    SpecParams.NONE);
            JsonNode tool = JSON.readTree(after.transcript()).get("events").get(1);
            assertThat(tool.get("output").asText()).isEqualTo("0\n0\n");
        }
    }

    /** A model that runs each command with bash, one per turn, then answers "done". */
    private static final class Scripted implements ModelClient {
        private final List<String> commands;
        private final AtomicInteger turn = new AtomicInteger();

        Scripted(List<String> commands) {
            this.commands = commands;
        }

        @Override
        public ModelResponse complete(ModelRequest request) {
            int t = turn.getAndIncrement();
            if (t >= commands.size()) {
                return new ModelResponse("done", "stop", "m", new Usage(1, 1), 1);
            }
            ToolCall call = new ToolCall("c" + t, "bash", JSON.createObjectNode().put("cmd", commands.get(t)).toString());
            ObjectNode message = JSON.createObjectNode().put("role", "assistant").putNull("content");
            message.withArray("tool_calls").addObject().put("id", call.id()).put("type", "function")
                    .putObject("function").put("name", "bash").put("arguments", call.arguments());
            return new ModelResponse("", "tool_calls", "m", new Usage(1, 1), 1, List.of(call), message);
        }

        @Override
        public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
            return CompletableFuture.completedFuture(complete(request));
        }
    }
}

package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --system} beside a vignette's own system message: one system message goes out, the run's
 * text first, then the vignette's; seen as a user sees it, in {@code --dry-run}, and said in {@code --help}.
 */
class SystemMessageCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void theRunsSystemPromptAndTheVignettesAreOneSystemMessage() throws Exception {
        Path suite = dir.resolve("chat.jsonl");
        Files.writeString(suite, """
                {"id": "a", "messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "2+2?"}], "expected": "4"}
                {"id": "b", "prompt": "3+3?", "expected": "6"}
                """);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = WorkerMain.run(new String[] {"coordinator", "--suite", suite.toString(), "--model", "m",
                "--system", "Answer with a number.", "--dry-run"}, new PrintWriter(out, true),
                new PrintWriter(err, true), Map.of());
        assertThat(exit).as(err.toString()).isZero();

        List<JsonNode> requests = requests(out.toString());
        assertThat(requests).hasSize(2);
        JsonNode a = requests.get(0).get("messages");
        assertThat(a.size()).isEqualTo(2);
        assertThat(a.get(0).get("role").asText()).isEqualTo("system");
        assertThat(a.get(0).get("content").asText()).isEqualTo("Answer with a number.\n\nYou are terse.");
        assertThat(a.get(1).get("role").asText()).isEqualTo("user");
        JsonNode b = requests.get(1).get("messages");
        assertThat(b.get(0).get("content").asText()).isEqualTo("Answer with a number.");
        assertThat(b.get(1).get("content").asText()).isEqualTo("3+3?");
    }

    @Test
    void helpSaysHowTheyAreJoined() {
        StringWriter out = new StringWriter();
        WorkerMain.run(new String[] {"eval", "--help"}, new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true), Map.of());
        assertThat(out.toString().replaceAll("\\s+", " "))
                .contains("this text, a blank line, then the vignette's (never two system messages");
    }

    /** The JSON bodies the dry run prints, each a block starting with "{" and ending with "}". */
    private static List<JsonNode> requests(String printed) throws Exception {
        List<JsonNode> bodies = new ArrayList<>();
        StringBuilder body = null;
        for (String line : printed.split("\n")) {
            if (line.equals("{")) {
                body = new StringBuilder();
            }
            if (body != null) {
                body.append(line).append('\n');
                if (line.equals("}")) {
                    bodies.add(JSON.readTree(body.toString()));
                    body = null;
                }
            }
        }
        return bodies;
    }
}

package dev.panoptes.control.suite;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ChatMessage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads few-shot examples: JSONL, one {@code {"input": "...", "answer": "..."}} per line, which
 * become a user turn and an assistant turn each, in file order, put before every prompt. Blank
 * lines are skipped; every problem is reported with its line number.
 *
 * <p>Stateless and thread-safe.
 */
public final class FewShotReader {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /**
     * @return the examples as chat turns (user, assistant, user, assistant, ...)
     * @throws SuiteFormatException when a line is not an object with string input and answer, or
     *                              the file holds no example
     * @throws IOException          when the file cannot be read
     */
    public List<ChatMessage> read(Path file) throws IOException, SuiteFormatException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<ChatMessage> turns = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            JsonNode node;
            try {
                node = JSON.readTree(line);
            } catch (IOException e) {
                // Also when a second value follows the first: one example per line.
                problems.add("line " + (i + 1) + ": not valid JSON");
                continue;
            }
            JsonNode input = node == null ? null : node.get("input");
            JsonNode answer = node == null ? null : node.get("answer");
            if (input == null || !input.isTextual() || answer == null || !answer.isTextual()) {
                problems.add("line " + (i + 1) + ": an example needs string fields \"input\" and \"answer\"");
                continue;
            }
            turns.add(ChatMessage.user(input.textValue()));
            turns.add(ChatMessage.assistant(answer.textValue()));
        }
        if (problems.isEmpty() && turns.isEmpty()) {
            problems.add("line 1: no examples; write one {\"input\": \"...\", \"answer\": \"...\"} per line");
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        return turns;
    }
}

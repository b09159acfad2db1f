package dev.panoptes.control.suite;

import dev.panoptes.control.Job;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SuiteTest {
    @TempDir
    Path dir;

    private final SuiteReader reader = new SuiteReader();

    @Test
    void readsOneVignettePerLineSkippingBlankLines() throws Exception {
        Path file = write("math.jsonl", """
                {"id": "q1", "prompt": "What is 2 + 2?", "expected": "4", "metadata": {"level": 1}}

                {"id": "q2", "prompt": "What is 3 + 5?", "unknown": true}
                """);
        Suite suite = reader.read(file);
        assertThat(suite.name()).isEqualTo("math");
        assertThat(suite.vignettes()).containsExactly(
                new Vignette("q1", "What is 2 + 2?", "4", Map.of("level", 1)),
                new Vignette("q2", "What is 3 + 5?"));
        assertThat(suite.hasExpectedAnswers()).isTrue();
        assertThat(suite.sha256()).hasSize(64);
    }

    @Test
    void everyMalformedLineIsReportedWithItsLineNumberBeforeAnythingRuns() throws Exception {
        Path file = write("bad.jsonl", """
                {"id": "q1", "prompt": "ok"}
                {"id": "q2", "prompt": "unterminated
                {"id": "q3", "prompt": ""}
                {"id": "q1", "prompt": "again"}
                [1, 2]
                {"prompt": "no id"}
                {"id": 7.5, "prompt": "fractional id"}
                {"id": "q8", "prompt": "p", "metadata": "not an object"}
                """);
        assertThatThrownBy(() -> reader.read(file))
                .isInstanceOfSatisfying(SuiteFormatException.class, e -> assertThat(e.problems()).satisfiesExactly(
                        p -> assertThat(p).startsWith("line 2: not valid JSON"),
                        p -> assertThat(p).isEqualTo("line 3: prompt of vignette 'q3' must not be empty"),
                        p -> assertThat(p).isEqualTo("line 4: duplicate vignette id 'q1' (first on line 1)"),
                        p -> assertThat(p).isEqualTo("line 5: vignette must be a JSON object, got an array"),
                        p -> assertThat(p).isEqualTo("line 6: vignette has no \"id\" field"),
                        p -> assertThat(p).isEqualTo("line 7: vignette.id must be a string or an integer, got a number"),
                        p -> assertThat(p).isEqualTo("line 8: vignette.metadata must be an object, got a string")))
                .hasMessageStartingWith(file + " has 7 problems:")
                .hasMessageContaining(file + ":4: duplicate vignette id 'q1'");
    }

    @Test
    void theOnePassReadingOfAFileAgreesWithTheLineByLineReading() throws Exception {
        String content = """
                {"id": "q1", "prompt": "What is 2 + 2?", "expected": "4", "metadata": {"level": 1, "tags": ["a"]}}
                {"unknown": [1, {"x": null}], "prompt": "p2", "id": "q2", "expected": null}

                {"id": "q3", "prompt": "ünïcödé ✓"}
                """;
        Path file = write("s.jsonl", content);
        Suite onePass = reader.read(file);
        Suite lineByLine = reader.read(new ByteArrayInputStream(content.getBytes(StandardCharsets.UTF_8)), "s",
                file.toString());
        assertThat(onePass).isEqualTo(lineByLine);
    }

    @Test
    void anObjectSpanningTwoLinesOrTwoObjectsOnOneLineAreProblems() throws Exception {
        Path spanning = write("span.jsonl", "{\"id\": \"a\",\n \"prompt\": \"p\"}\n");
        assertThatThrownBy(() -> reader.read(spanning)).isInstanceOf(SuiteFormatException.class)
                .hasMessageContaining("span.jsonl:1: not valid JSON");
        Path twoOnOne = write("two.jsonl", "{\"id\": \"a\", \"prompt\": \"p\"} {\"id\": \"b\", \"prompt\": \"q\"}\n");
        assertThatThrownBy(() -> reader.read(twoOnOne)).isInstanceOf(SuiteFormatException.class)
                .hasMessageContaining("two.jsonl:1: not valid JSON");
    }

    @Test
    void anEmptySuiteIsAProblem() throws Exception {
        Path file = write("empty.jsonl", "\n\n");
        assertThatThrownBy(() -> reader.read(file)).isInstanceOf(SuiteFormatException.class)
                .hasMessageContaining("has no vignettes");
    }

    @Test
    void invalidUtf8IsReported() {
        byte[] bytes = {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}', '\n'};
        assertThatThrownBy(() -> reader.read(new ByteArrayInputStream(bytes), "s", "s.jsonl"))
                .isInstanceOf(SuiteFormatException.class).hasMessageContaining("s.jsonl:1: not valid UTF-8");
    }

    @Test
    void jobsAreCutDeterministicallyWithIdsDerivedFromTheRun() throws Exception {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            lines.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"p").append(i).append("\"}\n");
        }
        Suite suite = reader.read(write("s.jsonl", lines.toString()));
        JobPlan plan = JobPlan.of(suite, SpecParams.NONE, 8, "");
        assertThat(plan.jobs()).extracting(Job::size).containsExactly(8, 8, 4);
        assertThat(plan.vignetteCount()).isEqualTo(20);
        assertThat(plan.jobs().get(0).id().value()).isEqualTo(plan.runId() + "-0000");
        assertThat(plan.jobs().get(2).spec().vignettes().get(0).id()).isEqualTo("q16");

        Suite sameContent = reader.read(write("copy.jsonl", lines.toString()));
        assertThat(JobPlan.of(sameContent, SpecParams.NONE, 8, "").jobs()).extracting(Job::id)
                .isEqualTo(plan.jobs().stream().map(Job::id).toList());

        List<String> otherRuns = List.of(
                JobPlan.of(suite, SpecParams.NONE, 4, "").runId(),
                JobPlan.of(suite, new SpecParams(null, 0.0, null, null), 8, "").runId(),
                JobPlan.of(suite, SpecParams.NONE, 8, "gpt-4o").runId(),
                JobPlan.of(reader.read(write("changed.jsonl", lines + "{\"id\":\"x\",\"prompt\":\"y\"}\n")),
                        SpecParams.NONE, 8, "").runId());
        assertThat(otherRuns).doesNotContain(plan.runId()).doesNotHaveDuplicates();
    }

    private Path write(String name, String content) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }
}

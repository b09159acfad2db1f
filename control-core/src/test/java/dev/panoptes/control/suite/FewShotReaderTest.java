package dev.panoptes.control.suite;

import dev.panoptes.control.ChatMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class FewShotReaderTest {
    @TempDir
    Path dir;

    private Path write(String content) throws Exception {
        Path file = dir.resolve("shots.jsonl");
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    private SuiteFormatException problemsOf(Path file) {
        return catchThrowableOfType(SuiteFormatException.class, () -> new FewShotReader().read(file));
    }

    @Test
    void eachExampleBecomesAUserTurnThenAnAssistantTurnInFileOrder() throws Exception {
        Path file = write("{\"input\": \"2+2?\", \"answer\": \"4\"}\n"
                + "\n"
                + "   \n"
                + "{\"answer\": \"Paris\", \"input\": \"Capital of France?\", \"source\": \"atlas\"}\n");

        List<ChatMessage> turns = new FewShotReader().read(file);

        assertThat(turns).containsExactly(
                ChatMessage.user("2+2?"), ChatMessage.assistant("4"),
                ChatMessage.user("Capital of France?"), ChatMessage.assistant("Paris"));
    }

    @Test
    void emptyStringsAreExamplesToo() throws Exception {
        List<ChatMessage> turns = new FewShotReader().read(write("{\"input\": \"\", \"answer\": \"\"}"));
        assertThat(turns).containsExactly(ChatMessage.user(""), ChatMessage.assistant(""));
    }

    @Test
    void everyBadLineIsReportedWithItsLineNumberCountingBlankLines() throws Exception {
        Path file = write("{\"input\": \"ok\", \"answer\": \"fine\"}\n"
                + "not json at all\n"
                + "\n"
                + "{\"input\": \"no answer\"}\n"
                + "{\"input\": \"numbers\", \"answer\": 4}\n"
                + "{\"input\": null, \"answer\": \"x\"}\n"
                + "[\"input\", \"answer\"]\n"
                + "{\"input\": \"ok again\", \"answer\": \"fine\"}\n");

        SuiteFormatException e = problemsOf(file);

        assertThat(e.problems()).containsExactly(
                "line 2: not valid JSON",
                "line 4: an example needs string fields \"input\" and \"answer\"",
                "line 5: an example needs string fields \"input\" and \"answer\"",
                "line 6: an example needs string fields \"input\" and \"answer\"",
                "line 7: an example needs string fields \"input\" and \"answer\"");
        assertThat(e.getMessage()).startsWith(file + " has 5 problems:").contains(file + ":2: not valid JSON");
    }

    @Test
    void aFileWithoutExamplesIsAProblem() throws Exception {
        assertThat(problemsOf(write("")).problems()).singleElement().asString().startsWith("line 1: no examples");
        assertThat(problemsOf(write("\n  \n\n")).problems()).singleElement().asString()
                .startsWith("line 1: no examples");
    }

    @Test
    void twoExamplesOnOneLineAreAProblemRatherThanHalfReadSilently() throws Exception {
        Path file = write("{\"input\": \"a\", \"answer\": \"b\"} {\"input\": \"c\", \"answer\": \"d\"}\n");

        SuiteFormatException e = problemsOf(file);

        assertThat(e).isNotNull();
        assertThat(e.problems()).singleElement().asString().startsWith("line 1: ");
    }
}

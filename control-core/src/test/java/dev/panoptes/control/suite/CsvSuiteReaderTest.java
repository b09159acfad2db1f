package dev.panoptes.control.suite;

import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class CsvSuiteReaderTest {
    @TempDir
    Path dir;

    private Path write(String name, String content) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    private SuiteFormatException problemsOf(Path file) {
        return catchThrowableOfType(SuiteFormatException.class, () -> new CsvSuiteReader().read(file));
    }

    @Test
    void knownColumnsFillTheVignetteAndEveryOtherColumnBecomesStringMetadata() throws Exception {
        Path file = write("quiz.csv", "id,prompt,expected,scorer,topic,level\n"
                + "q1,What is 2+2?,4,numeric,math,3\n"
                + "q2,Capital of France?,Paris,,geo,1\n");

        Suite suite = new CsvSuiteReader().read(file);

        assertThat(suite.name()).isEqualTo("quiz");
        assertThat(suite.vignettes()).containsExactly(
                new Vignette("q1", "What is 2+2?", "4", Map.of("topic", "math", "level", "3"), List.of(), "numeric"),
                new Vignette("q2", "Capital of France?", "Paris", Map.of("topic", "geo", "level", "1"), List.of(),
                        null));
        assertThat(suite.vignettes().get(0).metadata().get("level")).isInstanceOf(String.class);
        assertThat(suite.vignettes().get(0).metadata()).containsOnlyKeys("topic", "level");
    }

    @Test
    void quotedFieldsMayHoldCommasQuotesAndNewlines() throws Exception {
        Path file = write("quoted.csv", "id,prompt,expected,note\n"
                + "q1,\"Name three, please\",\"a, b, c\",plain\n"
                + "q2,\"He said \"\"hi\"\"\nand then\r\nleft\",\"\"\"hi\"\"\",\"x\"\n");

        Suite suite = new CsvSuiteReader().read(file);

        assertThat(suite.vignettes()).extracting(Vignette::prompt)
                .containsExactly("Name three, please", "He said \"hi\"\nand then\r\nleft");
        assertThat(suite.vignettes()).extracting(Vignette::expected).containsExactly("a, b, c", "\"hi\"");
        assertThat(suite.vignettes()).extracting(v -> v.metadata().get("note")).containsExactly("plain", "x");
    }

    @Test
    void anEmptyExpectedCellMeansNoExpectedAnswerAndEmptyMetadataCellsAreLeftOut() throws Exception {
        Path file = write("open.csv", "id,prompt,expected,scorer,topic\n"
                + "q1,Tell a story,,,\n"
                + "q2,Say hi,hi,,greeting\n");

        Suite suite = new CsvSuiteReader().read(file);

        Vignette open = suite.vignettes().get(0);
        assertThat(open.expected()).isNull();
        assertThat(open.scorer()).isNull();
        assertThat(open.metadata()).isEmpty();
        assertThat(suite.vignettes().get(1).expected()).isEqualTo("hi");
        assertThat(suite.hasExpectedAnswers()).isTrue();
    }

    @Test
    void onlyIdAndPromptColumnsAreNeeded() throws Exception {
        Suite suite = new CsvSuiteReader().read(write("bare.csv", "prompt,id\nhello,a\n"));
        assertThat(suite.vignettes()).containsExactly(new Vignette("a", "hello"));
    }

    @Test
    void aHeaderWithoutIdOrPromptIsReportedAsTheHeaderProblem() throws Exception {
        SuiteFormatException noId = problemsOf(write("noid.csv", "name,prompt,expected\na,hi,x\n"));
        assertThat(noId.problems()).singleElement().asString()
                .startsWith("row 1: ")
                .contains("header must name the columns id and prompt")
                .contains("[name, prompt, expected]");

        SuiteFormatException noPrompt = problemsOf(write("noprompt.csv", "id,question\na,hi\n"));
        assertThat(noPrompt.problems()).singleElement().asString()
                .startsWith("row 1: ")
                .contains("header must name the columns id and prompt")
                .contains("[id, question]");
    }

    @Test
    void duplicateIdsAndEmptyFieldsAreAllReportedTogetherWithTheirRows() throws Exception {
        Path file = write("bad.csv", "id,prompt,expected\n"
                + "a,first,x\n"
                + "b,,y\n"
                + "a,again,z\n"
                + ",no id,\n"
                + "c,fine,\n");

        SuiteFormatException e = problemsOf(file);

        assertThat(e.problems()).containsExactly(
                "row 3: prompt of vignette 'b' must not be empty",
                "row 4: duplicate vignette id 'a' (first on row 2)",
                "row 5: vignette id must not be empty");
        assertThat(e.getMessage()).startsWith(file + " has 3 problems:");
    }

    @Test
    void aHeaderWithoutRowsIsAnEmptySuite() throws Exception {
        SuiteFormatException e = problemsOf(write("empty.csv", "id,prompt,expected\n"));
        assertThat(e.problems()).singleElement().asString().startsWith("row 2: the suite has no vignettes");
    }

    @Test
    void aRowWithTooFewColumnsIsReportedWithItsOwnRowInThisProjectsWords() throws Exception {
        SuiteFormatException e = problemsOf(write("short.csv", "id,prompt,expected\na,hi,x\nb\n"));
        assertThat(e.problems()).containsExactly("row 3: 1 cell where the header names 3 (id, prompt, expected);"
                + " give every column a cell, empty ones included (a,b,)");
    }

    @Test
    void everyBadRowIsReportedNotOnlyTheFirst() throws Exception {
        SuiteFormatException e = problemsOf(write("bad.csv", """
                id,prompt,expected
                q1,What is 1, plus 1?,2
                q2,ok,3
                q3,What is 2, plus 2?,4
                q2,again,5
                """));
        assertThat(e.problems()).containsExactly(
                "row 2: 4 cells where the header names 3 (id, prompt, expected); a value holding a comma must be in"
                        + " double quotes (\"a, b\")",
                "row 4: 4 cells where the header names 3 (id, prompt, expected); a value holding a comma must be in"
                        + " double quotes (\"a, b\")",
                "row 5: duplicate vignette id 'q2' (first on row 3)");
        assertThat(e.getMessage()).doesNotContain("Too many entries");
    }

    @Test
    void anUnclosedQuoteIsSaidInThisProjectsWords() throws Exception {
        SuiteFormatException e = problemsOf(write("quote.csv", "id,prompt\nq1,ok\nq2,\"never closed\n"));
        assertThat(e.problems()).singleElement().asString().startsWith("row 3: a quoted value is never closed");
    }

    @Test
    void theDigestIsTheSha256OfTheFileBytesAndStableAcrossReadsAndNames() throws Exception {
        String content = "id,prompt,expected\nq1,\"a, b\",c\n";
        Path first = write("one.csv", content);
        Path second = write("two.csv", content);
        Path other = write("three.csv", content + "q2,d,e\n");

        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(content.getBytes(StandardCharsets.UTF_8)));
        CsvSuiteReader reader = new CsvSuiteReader();
        assertThat(reader.read(first).sha256()).isEqualTo(digest);
        assertThat(reader.read(first).sha256()).isEqualTo(digest);
        assertThat(reader.read(second).sha256()).isEqualTo(digest);
        assertThat(reader.read(other).sha256()).isNotEqualTo(digest);
    }

    @Test
    void theSuiteReaderHandsCsvFilesToTheCsvReaderWhateverTheCaseOfTheExtension() throws Exception {
        String content = "id,prompt,expected,topic\nq1,\"x, y\",z,t\n";
        Path lower = write("s.csv", content);
        Path upper = write("s.CSV", content);

        Suite direct = new CsvSuiteReader().read(lower);
        assertThat(new SuiteReader().read(lower)).isEqualTo(direct);
        assertThat(new SuiteReader().read(upper).vignettes()).isEqualTo(direct.vignettes());
        assertThat(direct.vignettes().get(0).metadata()).containsEntry("topic", "t");
    }

    @Test
    void theSuiteReaderReportsCsvProblemsWithRows() throws Exception {
        Path file = write("dup.csv", "id,prompt\na,x\na,y\n");
        SuiteFormatException e = catchThrowableOfType(SuiteFormatException.class,
                () -> new SuiteReader().read(file));
        assertThat(e.problems()).containsExactly("row 3: duplicate vignette id 'a' (first on row 2)");
    }

    @Test
    void theExceptionMessageNamesTheRowOfEachCsvProblem() throws Exception {
        StringBuilder csv = new StringBuilder("id,prompt\n");
        for (int i = 2; i <= 11; i++) {
            csv.append("q").append(i).append(",p\n");
        }
        csv.append("q2,again\n");
        Path file = write("dup.csv", csv.toString());

        SuiteFormatException e = problemsOf(file);

        assertThat(e.problems()).containsExactly("row 12: duplicate vignette id 'q2' (first on row 2)");
        assertThat(e.getMessage()).containsPattern("(row 12|:12): duplicate vignette id 'q2'");
    }

    @Test
    void anEmptyFileIsASuiteProblemNotAnIoFailure() throws Exception {
        SuiteFormatException e = problemsOf(write("empty.csv", ""));
        assertThat(e).isNotNull();
        assertThat(e.problems()).singleElement().asString().startsWith("row ");
    }

    @Test
    void aMalformedHeaderIsASuiteProblemNotAnIoFailure() throws Exception {
        SuiteFormatException e = problemsOf(write("badheader.csv", "\"id,prompt\na,b\n"));
        assertThat(e).isNotNull();
        assertThat(e.problems()).singleElement().asString().startsWith("row 1: ");
    }
}

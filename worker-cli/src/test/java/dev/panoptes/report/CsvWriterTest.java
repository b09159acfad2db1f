package dev.panoptes.report;

import dev.panoptes.report.CsvWriter.Cell;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class CsvWriterTest {

    @Test
    void neutralizesTheClassicCommandInjectionAndQuotesIt() {
        assertThat(text("=cmd|' /C calc'!A0")).isEqualTo("\"'=cmd|' /C calc'!A0\"");
    }

    @Test
    void neutralizesEveryFormulaTrigger() {
        assertThat(text("+1+1")).isEqualTo("\"'+1+1\"");
        assertThat(text("-2-cmd")).isEqualTo("\"'-2-cmd\"");
        assertThat(text("@SUM(A1)")).isEqualTo("\"'@SUM(A1)\"");
        assertThat(text("\t=1+2")).isEqualTo("\"'\t=1+2\"");
        assertThat(text("\r=1+2")).isEqualTo("\"'\r=1+2\"");
        assertThat(text("=HYPERLINK(\"x\",\"y\")")).isEqualTo("\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"");
    }

    @Test
    void aCellThatIsAPlainNumberIsANumberInAnyColumn() {
        // The issue: "What is 65 - 89?" exported its expected answer and response as '-24.
        assertThat(text("-24")).isEqualTo("-24");
        assertThat(text("+1")).isEqualTo("+1");
        assertThat(text("-3.5")).isEqualTo("-3.5");
        assertThat(text("-.5")).isEqualTo("-.5");
        assertThat(text("-5.")).isEqualTo("-5.");
        assertThat(text("-1e-3")).isEqualTo("-1e-3");
        assertThat(CsvWriter.isPlainNumber("0")).isTrue();
    }

    @Test
    void somethingThatOnlyLooksLikeANumberIsStillGuarded() {
        for (String formula : List.of("-24+1", "-1e", "--1", "- 24", "-0x1F", "+-1", "-24 ", "-", "+", "-.", "-1,5",
                "-1;2", "-Infinity", "-NaN", "-1\n=2")) {
            assertThat(text(formula)).as(formula).startsWith("\"'");
        }
    }

    @Test
    void leavesPlainNumbersInNumericColumnsAlone() {
        assertThat(CsvWriter.field(Cell.number("-3.5"))).isEqualTo("-3.5");
        assertThat(CsvWriter.field(Cell.number("1e-3"))).isEqualTo("1e-3");
        assertThat(CsvWriter.field(Cell.number("-2E+10"))).isEqualTo("-2E+10");
        assertThat(CsvWriter.field(Cell.number(-7L))).isEqualTo("-7");
        assertThat(CsvWriter.field(Cell.number((Long) null))).isEmpty();
    }

    @Test
    void neutralizesANumericCellThatIsNotAPlainNumber() {
        assertThat(CsvWriter.field(Cell.number("-1+2"))).isEqualTo("\"'-1+2\"");
        assertThat(CsvWriter.field(Cell.number("=1"))).isEqualTo("\"'=1\"");
    }

    @Test
    void quotesCommasQuotesAndLineBreaksAsRfc4180Says() {
        assertThat(text("a,b")).isEqualTo("\"a,b\"");
        assertThat(text("say \"hi\"")).isEqualTo("\"say \"\"hi\"\"\"");
        assertThat(text("line 1\nline 2")).isEqualTo("\"line 1\nline 2\"");
        assertThat(text("a\r\nb")).isEqualTo("\"a\r\nb\"");
        assertThat(text("plain text")).isEqualTo("plain text");
        assertThat(text("mid-word = fine")).isEqualTo("mid-word = fine");
        assertThat(text(null)).isEmpty();
    }

    @Test
    void writesRecordsEndingInCrLf() throws IOException {
        StringWriter out = new StringWriter();
        CsvWriter csv = new CsvWriter(out);

        csv.writeRow(List.of("model", "score", "response"));
        csv.writeCells(List.of(Cell.text("m-a"), Cell.number("-3.5"), Cell.text("-3.5")));
        csv.writeRow(Arrays.asList("x", null, "He said \"=1\",\nthen left"));
        csv.flush();

        assertThat(out.toString()).isEqualTo("model,score,response\r\n"
                + "m-a,-3.5,-3.5\r\n"
                + "x,,\"He said \"\"=1\"\",\nthen left\"\r\n");
    }

    private static String text(String value) {
        return CsvWriter.field(Cell.text(value));
    }
}

package dev.panoptes.report;

import java.io.Flushable;
import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Writes RFC 4180 CSV that is also safe to open in a spreadsheet.
 *
 * <p><b>Quoting (RFC 4180).</b> A field holding a comma, a double quote, CR or LF is wrapped in
 * double quotes, with each double quote inside doubled. Records end with CRLF, as the RFC says.
 *
 * <p><b>Formula injection.</b> Model answers and prompts are untrusted text, and a spreadsheet
 * runs a cell that starts with {@code =}, {@code +}, {@code -} or {@code @} (and, in some, a
 * leading tab or CR) as a formula, for example {@code =cmd|' /C calc'!A0}. As OWASP
 * recommends, such a cell gets a leading single quote, which makes it plain text, and is then
 * always wrapped in double quotes: {@code =1+2} is written {@code "'=1+2"}.
 *
 * <p><b>Numbers stay numbers.</b> The rule: a cell that is a plain decimal number is a number,
 * in any column, and is written unchanged: an optional sign, digits with an optional fraction
 * (or a fraction alone), an optional exponent, nothing else ({@code -24}, {@code +1},
 * {@code -3.5}, {@code .5}, {@code 1e-3}). A spreadsheet reads such a cell as that number, which
 * runs nothing, and a CSV reader gets back exactly the text the export had, so the expected
 * answer {@code -24} of "What is 65 - 89?" round-trips. Anything else that starts with a trigger
 * ({@code -24+1}, {@code -1e}, {@code --1}, {@code - 24}, {@code -0x1F}) is guarded as above.
 * {@link Cell#number} and {@link Cell#text} follow the same rule; the kind only documents the
 * column.
 *
 * <p>Not thread-safe; one writer per output. It does not close the underlying writer.
 */
public final class CsvWriter implements Flushable {
    /** Sign, then digits with an optional fraction or a fraction alone, then an optional exponent. */
    private static final Pattern PLAIN_NUMBER = Pattern.compile("[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?");
    private static final String RECORD_END = "\r\n";

    private final Writer out;

    /** @param out where the CSV goes; not closed by this class */
    public CsvWriter(Writer out) {
        this.out = Objects.requireNonNull(out, "out");
    }

    /**
     * One cell of a row: its text, and whether it belongs to a numeric column.
     *
     * @param value   the text; null is written as an empty field
     * @param numeric true for a numeric column; documents the column, since every cell that is a
     *                plain number is written as is
     */
    public record Cell(String value, boolean numeric) {
        /** A text cell: neutralized if it could be read as a formula. */
        public static Cell text(String value) {
            return new Cell(value, false);
        }

        /** A cell of a numeric column given as text, for example a figure from {@link Figures}. */
        public static Cell number(String value) {
            return new Cell(value, true);
        }

        /** A whole number; null is an empty field. */
        public static Cell number(Long value) {
            return new Cell(value == null ? null : value.toString(), true);
        }
    }

    /** Writes one record of text cells, for example a header row. */
    public void writeRow(List<String> cells) throws IOException {
        Objects.requireNonNull(cells, "cells");
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.write(field(Cell.text(cells.get(i))));
        }
        out.write(RECORD_END);
    }

    /** Writes one record of cells, each text or numeric. */
    public void writeCells(List<Cell> cells) throws IOException {
        Objects.requireNonNull(cells, "cells");
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.write(field(cells.get(i)));
        }
        out.write(RECORD_END);
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    /**
     * The field as it appears in the file: neutralized against formulas, then quoted if needed.
     *
     * @param cell the cell; a null cell or value is an empty field
     */
    public static String field(Cell cell) {
        String value = cell == null || cell.value() == null ? "" : cell.value();
        if (isPlainNumber(value)) {
            return value;
        }
        boolean formula = !value.isEmpty() && "=+-@\t\r".indexOf(value.charAt(0)) >= 0;
        if (formula) {
            return quote("'" + value);
        }
        if (value.indexOf(',') >= 0 || value.indexOf('"') >= 0 || value.indexOf('\n') >= 0
                || value.indexOf('\r') >= 0) {
            return quote(value);
        }
        return value;
    }

    /** True when the text is a plain decimal number, which a spreadsheet reads as that number. */
    public static boolean isPlainNumber(String value) {
        return value != null && PLAIN_NUMBER.matcher(value).matches();
    }

    private static String quote(String value) {
        return '"' + value.replace("\"", "\"\"") + '"';
    }
}

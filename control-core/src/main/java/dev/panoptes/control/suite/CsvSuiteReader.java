package dev.panoptes.control.suite;

import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.RuntimeJsonMappingException;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import dev.panoptes.control.Vignette;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a CSV suite (RFC 4180: quoted fields may hold commas, quotes and newlines), with a header
 * row naming the columns: {@code id} and {@code prompt} are required, {@code expected} and
 * {@code scorer} optional, and every other column becomes a metadata entry (a string) of each
 * vignette. An empty {@code expected} cell means no expected answer. Every problem is collected
 * with its row number and reported together, before anything runs: a row with more cells than
 * the header (an unquoted comma) or fewer, an empty id or prompt, a duplicate id, each in its own
 * words and with what to do; reading goes on past every bad row but one the CSV parser cannot
 * read at all (an unclosed quote, which runs on to the end of the file).
 *
 * <p>Stateless and thread-safe.
 */
public final class CsvSuiteReader {
    private static final List<String> KNOWN = List.of("id", "prompt", "expected", "scorer");
    private final CsvMapper mapper = new CsvMapper();

    /**
     * Reads a CSV suite file.
     *
     * @throws SuiteFormatException when the header or any row is wrong (all problems, with row numbers)
     * @throws IOException          when the file cannot be read
     */
    public Suite read(Path file) throws IOException, SuiteFormatException {
        byte[] bytes = Files.readAllBytes(file);
        String name = file.getFileName().toString().replaceFirst("\\.[^.]*$", "");
        List<String> problems = new ArrayList<>();
        List<Vignette> vignettes = new ArrayList<>();
        Map<String, Integer> firstRowOfId = new HashMap<>();
        // Rows as plain lists of cells, so that this reader (not the CSV library) decides what a
        // row with the wrong number of cells is, reports it in its own words and goes on.
        try (MappingIterator<String[]> rows = mapper.readerFor(String[].class)
                .with(CsvParser.Feature.WRAP_AS_ARRAY).with(CsvParser.Feature.SKIP_EMPTY_LINES)
                .readValues(bytes)) {
            List<String> columns = header(rows, problems);
            if (columns == null) {
                throw new SuiteFormatException(file.toString(), problems);
            }
            // A row is a record, as a spreadsheet shows it: a quoted value may span lines.
            int row = 1;
            while (true) {
                String[] cells;
                row++;
                try {
                    if (!rows.hasNextValue()) {
                        break;
                    }
                    cells = rows.nextValue();
                } catch (RuntimeJsonMappingException | IOException e) {
                    // Past an unreadable record (an unclosed quote runs to the end of the file) no row can be told apart.
                    problems.add("row " + row + ": " + unreadable(e));
                    break;
                }
                if (cells.length != columns.size()) {
                    problems.add("row " + row + ": " + cellCount(cells.length, columns));
                    continue;
                }
                Vignette v = vignette(columns, cells, row, problems);
                if (v == null) {
                    continue;
                }
                Integer first = firstRowOfId.putIfAbsent(v.id(), row);
                if (first != null) {
                    problems.add("row " + row + ": duplicate vignette id '" + v.id() + "' (first on row " + first + ")");
                    continue;
                }
                vignettes.add(v);
            }
        } catch (IOException | RuntimeJsonMappingException e) {
            if (problems.isEmpty()) {
                problems.add("row 1: " + unreadable(e));
            }
        }
        if (problems.isEmpty() && vignettes.isEmpty()) {
            problems.add("row 2: the suite has no vignettes; write a header row (id,prompt,expected) and one row"
                    + " per vignette");
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        return new Suite(name, vignettes, sha256(bytes));
    }

    /** "4 cells where the header names 3 (id, prompt, expected): ...", with what to do about it. */
    private static String cellCount(int cells, List<String> columns) {
        String what = cells + (cells == 1 ? " cell" : " cells") + " where the header names " + columns.size()
                + " (" + String.join(", ", columns) + ")";
        return cells > columns.size()
                ? what + "; a value holding a comma must be in double quotes (\"a, b\")"
                : what + "; give every column a cell, empty ones included (a,b,)";
    }

    /** What is wrong with a record the CSV parser could not read, in this project's words. */
    private static String unreadable(Exception e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        if (message.contains("Missing closing quote") || message.contains("EOF in quoted")) {
            return "a quoted value is never closed; end it with a double quote, and write a quote inside a"
                    + " quoted value as two (\"\")";
        }
        if (message.contains("Expected separator") || message.contains("Unexpected character")) {
            return "a double quote inside a value that is not quoted as a whole; quote the value and double the"
                    + " quote (\"say \"\"hi\"\"\")";
        }
        return "not valid CSV: " + firstLine(message);
    }

    /**
     * The header's column names, or null (with the problem added) when the file is empty or the
     * header lacks id or prompt, or names a column twice.
     */
    private static List<String> header(MappingIterator<String[]> rows, List<String> problems) throws IOException {
        List<String> columns = new ArrayList<>();
        if (rows.hasNextValue()) {
            for (String c : rows.nextValue()) {
                columns.add(c.strip());
            }
        }
        if (columns.isEmpty() || columns.size() == 1 && columns.get(0).isEmpty()) {
            problems.add("row 1: the file is empty; write a header row (id,prompt,expected) and one row per vignette");
            return null;
        }
        if (!columns.contains("id") || !columns.contains("prompt")) {
            problems.add("row 1: the header must name the columns id and prompt (and may name expected, scorer"
                    + " and any metadata), got " + columns);
            return null;
        }
        if (new java.util.HashSet<>(columns).size() != columns.size()) {
            problems.add("row 1: the header names a column twice: " + columns);
            return null;
        }
        return columns;
    }

    private static Vignette vignette(List<String> columns, String[] values, int row, List<String> problems) {
        Map<String, String> cells = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
            cells.put(columns.get(i), values[i]);
        }
        Map<String, Object> metadata = new LinkedHashMap<>();
        cells.forEach((column, value) -> {
            if (!KNOWN.contains(column) && value != null && !value.isEmpty()) {
                metadata.put(column, value);
            }
        });
        String expected = cells.get("expected");
        try {
            return new Vignette(cells.get("id"), cells.get("prompt"), expected == null || expected.isEmpty() ? null
                    : expected, metadata, List.of(), cells.get("scorer"));
        } catch (IllegalArgumentException | NullPointerException e) {
            problems.add("row " + row + ": " + e.getMessage());
            return null;
        }
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}

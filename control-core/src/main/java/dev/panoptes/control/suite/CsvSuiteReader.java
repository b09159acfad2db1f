package dev.panoptes.control.suite;

import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.RuntimeJsonMappingException;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
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
 * with its row number and reported together, before anything runs.
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
        CsvSchema schema = CsvSchema.emptySchema().withHeader();
        try (MappingIterator<Map<String, String>> rows = mapper.readerForMapOf(String.class).with(schema)
                .with(CsvParser.Feature.FAIL_ON_MISSING_COLUMNS).readValues(bytes)) {
            List<String> columns = header(rows, problems);
            if (columns == null) {
                throw new SuiteFormatException(file.toString(), problems);
            }
            // A row is a record, as a spreadsheet shows it: a quoted value may span lines.
            int row = 1;
            while (true) {
                Map<String, String> cells;
                row++;
                try {
                    if (!rows.hasNextValue()) {
                        break;
                    }
                    cells = rows.nextValue();
                } catch (RuntimeJsonMappingException | IOException e) {
                    problems.add("row " + row + ": not valid CSV: " + firstLine(e.getMessage()));
                    break;
                }
                Vignette v = vignette(cells, row, problems);
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
                problems.add("row 1: not valid CSV: " + firstLine(e.getMessage()));
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

    /**
     * The header's column names, or null (with the problem added) when the file is empty or the
     * header lacks id or prompt.
     */
    private static List<String> header(MappingIterator<Map<String, String>> rows, List<String> problems)
            throws IOException {
        CsvSchema header = (CsvSchema) rows.getParserSchema();
        List<String> columns = new ArrayList<>();
        if (header != null) {
            header.forEach(c -> columns.add(c.getName()));
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
        return columns;
    }

    private static Vignette vignette(Map<String, String> cells, int row, List<String> problems) {
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

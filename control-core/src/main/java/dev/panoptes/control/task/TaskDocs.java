package dev.panoptes.control.task;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The documents of one split of a task's data, from a local file as Hugging Face's {@code json}
 * and {@code csv} loaders read it: JSON Lines (one object a line), a JSON array of objects (or
 * an object whose {@code field} holds one), or CSV with a header row, whose cells read as whole
 * numbers, decimals, {@code True}/{@code False} or text (empty cells as null), as the CSV loader's
 * type inference would. Stateless.
 */
final class TaskDocs {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_LONG_FOR_INTS);

    private TaskDocs() {
    }

    /**
     * @param field the key of the JSON object that holds the documents (dataset_kwargs' field), or null
     * @throws IllegalArgumentException naming the line (JSONL) or what is wrong
     */
    static List<Map<String, Object>> read(Path file, String field) throws IOException {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".csv")) {
            return csv(file);
        }
        String first = firstNonBlank(file);
        if (first.startsWith("[") || field != null) {
            JsonNode root = JSON.readTree(file.toFile());
            JsonNode docs = field == null ? root : root.get(field);
            if (docs == null || !docs.isArray()) {
                throw new IllegalArgumentException(field == null ? "a JSON file of documents holds an array of"
                        + " objects" : "the JSON file has no array of documents under \"" + field + "\"");
            }
            List<Map<String, Object>> out = new ArrayList<>();
            for (JsonNode d : docs) {
                out.add(object(d, "document " + out.size()));
            }
            return out;
        }
        List<Map<String, Object>> out = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int lineNo = 0;
            while ((line = reader.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode d;
                try {
                    d = JSON.readTree(line);
                } catch (IOException e) {
                    throw new IllegalArgumentException("line " + lineNo + ": not valid JSON");
                }
                out.add(object(d, "line " + lineNo));
            }
        }
        return out;
    }

    private static String firstNonBlank(Path file) throws IOException {
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int c;
            while ((c = reader.read()) != -1) {
                if (!Character.isWhitespace(c)) {
                    return String.valueOf((char) c);
                }
            }
        }
        return "";
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(JsonNode d, String where) {
        if (d == null || !d.isObject()) {
            throw new IllegalArgumentException(where + ": a document is a JSON object");
        }
        return JSON.convertValue(d, LinkedHashMap.class);
    }

    private static List<Map<String, Object>> csv(Path file) throws IOException {
        CsvMapper mapper = new CsvMapper();
        CsvSchema schema = CsvSchema.emptySchema().withHeader();
        List<Map<String, Object>> out = new ArrayList<>();
        try (MappingIterator<Map<String, String>> rows = mapper.readerFor(Map.class).with(schema)
                .readValues(file.toFile())) {
            while (rows.hasNext()) {
                Map<String, String> row = rows.next();
                Map<String, Object> doc = new LinkedHashMap<>();
                for (Map.Entry<String, String> e : row.entrySet()) {
                    doc.put(e.getKey(), cell(e.getValue()));
                }
                out.add(doc);
            }
        }
        return out;
    }

    /** A CSV cell typed as the CSV loader infers a column's type, cell by cell. */
    static Object cell(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        if (text.matches("-?\\d{1,18}")) {
            return Long.parseLong(text);
        }
        if (text.matches("-?(\\d+\\.\\d*|\\.\\d+)([eE][-+]?\\d+)?")) {
            return Double.parseDouble(text);
        }
        if (text.equals("True") || text.equals("False")) {
            return Boolean.parseBoolean(text);
        }
        return text;
    }
}

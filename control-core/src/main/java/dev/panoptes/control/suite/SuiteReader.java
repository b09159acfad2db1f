package dev.panoptes.control.suite;

import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.MessageCodec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Set;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a JSONL suite: one vignette per line, {@code {"id", "prompt" or "messages", "expected"?,
 * "metadata"?, "scorer"?}}; a file whose name ends in {@code .csv} is read by {@link CsvSuiteReader}.
 * Blank lines are skipped. Every problem (malformed JSON, a missing or empty field, a field of
 * the wrong type, a duplicate id) is collected with its line number and reported together, before
 * anything runs.
 *
 * <p>Stateless and thread-safe.
 */
public final class SuiteReader {
    private final MessageCodec codec = new MessageCodec();

    /**
     * Reads a suite file.
     *
     * @throws SuiteFormatException when any line is wrong (all problems, with line numbers)
     * @throws IOException          when the file cannot be read
     */
    public Suite read(Path file) throws IOException, SuiteFormatException {
        if (file.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".csv")) {
            return new CsvSuiteReader().read(file);
        }
        String name = file.getFileName().toString().replaceFirst("\\.[^.]*$", "");
        // A well-formed suite is read in one streaming pass; only a file with problems is read
        // again line by line, to name every problem with its line number.
        MessageDigest sha256 = sha256();
        try (InputStream in = new DigestInputStream(new java.io.BufferedInputStream(Files.newInputStream(file),
                1 << 16), sha256)) {
            List<Integer> lines = new LineNumbers();
            Map<String, Integer> unused = new LinkedHashMap<>();
            Optional<List<Vignette>> vignettes = codec.vignettes(in, lines, unused);
            if (vignettes.isPresent() && !vignettes.get().isEmpty()) {
                List<String> unsendable = LoneSurrogates.problems(vignettes.get(), lines);
                if (!unsendable.isEmpty()) {
                    throw new SuiteFormatException(file.toString(), unsendable);
                }
                return new Suite(name, vignettes.get(), HexFormat.of().formatHex(sha256.digest()), lines,
                        unusedNote(file.toString(), unused));
            }
        }
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, name, file.toString());
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /**
     * Reads a suite from a stream (UTF-8), naming it {@code name} and calling it {@code source}
     * in error messages.
     */
    public Suite read(InputStream input, String name, String source) throws IOException, SuiteFormatException {
        MessageDigest sha256 = sha256();
        List<Vignette> vignettes = new ArrayList<>();
        List<Integer> lines = new LineNumbers();
        List<String> problems = new ArrayList<>();
        Map<String, Integer> firstLineOfId = new HashMap<>();
        Map<String, Integer> unused = new LinkedHashMap<>();
        Set<String> lineUnused = new HashSet<>();
        var decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(new DigestInputStream(input, sha256),
                decoder), 1 << 16)) {
            String line;
            int lineNo = 0;
            while (true) {
                try {
                    line = reader.readLine();
                } catch (CharacterCodingException e) {
                    problems.add("line " + (lineNo + 1) + ": not valid UTF-8");
                    break;
                }
                if (line == null) {
                    break;
                }
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                Vignette v = parse(line, lineNo, problems, lineUnused);
                for (String field : lineUnused) {
                    unused.putIfAbsent(field, lineNo);
                }
                lineUnused.clear();
                if (v == null) {
                    continue;
                }
                Integer first = firstLineOfId.putIfAbsent(v.id(), lineNo);
                if (first != null) {
                    problems.add("line " + lineNo + ": duplicate vignette id '" + v.id() + "' (first on line "
                            + first + ")");
                    continue;
                }
                vignettes.add(v);
                lines.add(lineNo);
            }
        }
        if (problems.isEmpty() && vignettes.isEmpty()) {
            problems.add("line 1: the suite has no vignettes; write one JSON object per line, "
                    + "like {\"id\": \"q1\", \"prompt\": \"...\", \"expected\": \"...\"}");
        }
        problems.addAll(LoneSurrogates.problems(vignettes, lines));
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(source, problems);
        }
        return new Suite(name, vignettes, HexFormat.of().formatHex(sha256.digest()), lines,
                unusedNote(source, unused));
    }

    /**
     * The note saying once per suite which fields its lines hold that Panoptes does not read, each with the
     * first line that has it: a typo in a field name would otherwise leave answers unscored
     * without a word.
     */
    private static List<String> unusedNote(String source, Map<String, Integer> unused) {
        if (unused.isEmpty()) {
            return List.of();
        }
        StringBuilder fields = new StringBuilder();
        for (Map.Entry<String, Integer> e : unused.entrySet()) {
            fields.append(fields.length() == 0 ? "" : ", ").append('"').append(e.getKey()).append("\" (first on line ")
                    .append(e.getValue()).append(')');
        }
        return List.of(source + ": fields not used, ignored: " + fields + "; a vignette reads id, prompt or messages"
                + " (or Inspect's input), expected (or target), choices, choiceDelimiter, metadata, scorer and sandbox");
    }

    private Vignette parse(String line, int lineNo, List<String> problems, Set<String> unused) {
        try {
            return codec.vignette(line, "vignette", unused);
        } catch (ProtocolException e) {
            problems.add("line " + lineNo + ": " + e.getMessage());
            return null;
        }
    }
}

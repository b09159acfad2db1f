package dev.panoptes.control.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.Vignette;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads vignettes written as JSON lines, a suite file's format, with the same field readers as
 * an {@code assign} frame's vignettes ({@link PayloadReader#vignette}).
 *
 * <p>A whole file is read in one pass with one parser ({@link #suite}), which declines the file
 * at its first problem of any kind; the caller then reads it line by line ({@link #line}), which
 * names each problem in words a person fixing the file can act on. A line is read first as it
 * is and, when that fails, again from its tree, as {@link MessageDecoder} reads frames.
 *
 * <p>Thread-safe and stateless beyond Jackson's immutable factory and readers.
 */
final class VignetteLineDecoder {
    private final ObjectMapper mapper;
    private final JsonFactory factory;
    private final PayloadReader payloads;

    VignetteLineDecoder(ObjectMapper mapper, PayloadReader payloads) {
        this.mapper = mapper;
        this.factory = mapper.getFactory();
        this.payloads = payloads;
    }

    /**
     * One vignette object from JSON text.
     *
     * @param path what to call the object in error messages
     * @throws ProtocolException naming the bad field, or saying the text is not valid JSON
     */
    Vignette line(String json, String path) {
        return line(json, path, null);
    }

    /** As {@link #line(String, String)}, adding the fields it did not read to {@code unused} (when not null). */
    Vignette line(String json, String path, Set<String> unused) {
        try {
            return lineInOnePass(json, unused);
        } catch (IOException | RuntimeException e) {
            // Malformed or wrong: read it again from its tree, which says how.
            return lineCarefully(json, path);
        }
    }

    /** Reads a line through its tree, which checks the JSON first; see {@link #line}. */
    Vignette lineCarefully(String json, String path) {
        JsonNode node;
        try {
            node = mapper.readTree(json);
        } catch (JsonProcessingException e) {
            throw new ProtocolException("not valid JSON: " + JsonErrors.plain(e), e);
        }
        if (node == null || !node.isObject()) {
            throw new ProtocolException(path + " must be a JSON object, got "
                    + (node == null ? "nothing" : MessageDecoder.describe(node)));
        }
        try (JsonParser p = mapper.treeAsTokens(node)) {
            p.nextToken();
            return payloads.vignette(p);
        } catch (FieldReader.Fault e) {
            throw new ProtocolException(path + e.getMessage(), e);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ProtocolException(e.getMessage(), e);
        } catch (IOException e) {
            // A tree is in memory: nothing to fail but a bug.
            throw new ProtocolException("could not read " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads a line that holds one object and nothing else, in one pass.
     *
     * @throws FieldReader.Fault when it is not an object alone, or its fields are wrong
     * @throws IOException when it is not valid JSON
     * @throws IllegalArgumentException when a vignette's constructor refuses a value
     */
    Vignette lineInOnePass(String json) throws IOException {
        return lineInOnePass(json, null);
    }

    private Vignette lineInOnePass(String json, Set<String> unused) throws IOException {
        try (JsonParser p = factory.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new FieldReader.Fault(" is not an object");
            }
            Vignette v = payloads.vignette(p, unused);
            if (p.nextToken() != null) {
                throw new FieldReader.Fault(" is followed by more JSON");
            }
            return v;
        }
    }

    /**
     * A whole JSONL stream read with one parser: every vignette, in order, or null when anything
     * is off (malformed JSON, an object not alone on its line, a bad field, a duplicate id).
     *
     * @param lines  gets each vignette's line number (from 1); meaningless when this returns null
     * @param unused gets each field name the vignettes have and Panoptes does not read, with the
     *               first line that has it; null when nobody asks
     */
    List<Vignette> suite(InputStream in, List<Integer> lines, Map<String, Integer> unused) {
        Set<String> lineUnused = unused == null ? null : new HashSet<>();
        try (JsonParser p = factory.createParser(in)) {
            List<Vignette> vignettes = new ArrayList<>();
            Set<String> ids = new HashSet<>();
            int lastLine = 0;
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                int line = p.currentTokenLocation().getLineNr();
                if (t != JsonToken.START_OBJECT || line <= lastLine) {
                    return null;
                }
                Vignette v = payloads.vignette(p, lineUnused);
                if (p.currentTokenLocation().getLineNr() != line || !ids.add(v.id())) {
                    return null;
                }
                if (lineUnused != null && !lineUnused.isEmpty()) {
                    for (String field : lineUnused) {
                        unused.putIfAbsent(field, line);
                    }
                    lineUnused.clear();
                }
                lastLine = line;
                vignettes.add(v);
                lines.add(line);
            }
            return vignettes;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}

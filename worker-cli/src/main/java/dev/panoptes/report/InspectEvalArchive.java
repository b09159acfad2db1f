package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * An Inspect AI eval log in its {@code .eval} form: a zip that holds the log's start
 * ({@code _journal/start.json}: version, eval spec, plan), one member per sample
 * ({@code samples/<id>_epoch_<epoch>.json}, the epoch from 1), the samples' summaries
 * ({@code summaries.json}, and the same as the journal's one flush), the scores reduced over
 * epochs ({@code reductions.json}, when the log has them) and the header ({@code header.json}: the
 * log without its samples and reductions), as Inspect's {@code EvalRecorder} writes them. The
 * viewer reads the header and summaries first and a sample when it is opened, so a large run
 * opens without loading every answer.
 *
 * <p>Stateless; any thread.
 */
final class InspectEvalArchive {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What a summary keeps of a sample: the fields Inspect's {@code EvalSampleSummary} has. */
    private static final List<String> SUMMARY_FIELDS = List.of("id", "epoch", "input", "choices", "target", "metadata",
            "scores", "model_usage", "total_time", "working_time");

    private InspectEvalArchive() {
    }

    /** The zip's bytes for a log as {@link InspectLog#log} builds it. */
    static byte[] zip(ObjectNode log) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            ObjectNode start = JSON.createObjectNode();
            start.set("version", log.get("version"));
            start.set("eval", log.get("eval"));
            start.set("plan", log.get("plan"));
            put(zip, "_journal/start.json", start);
            ArrayNode summaries = JSON.createArrayNode();
            for (JsonNode sample : log.path("samples")) {
                put(zip, "samples/" + sample.get("id").asText() + "_epoch_" + sample.get("epoch").asInt() + ".json",
                        sample);
                summaries.add(summary(sample));
            }
            put(zip, "_journal/summaries/1.json", summaries);
            put(zip, "summaries.json", summaries);
            if (log.has("reductions")) {
                put(zip, "reductions.json", log.get("reductions"));
            }
            ObjectNode header = log.deepCopy();
            header.remove("samples");
            header.remove("reductions");
            put(zip, "header.json", header);
        }
        return bytes.toByteArray();
    }

    private static ObjectNode summary(JsonNode sample) {
        ObjectNode summary = JSON.createObjectNode();
        for (String field : SUMMARY_FIELDS) {
            if (sample.has(field)) {
                summary.set(field, sample.get(field));
            }
        }
        if (sample.has("error")) {
            summary.set("error", sample.get("error").get("message"));
        }
        summary.put("completed", true);
        summary.put("message_count", sample.path("messages").size());
        return summary;
    }

    /**
     * Adds a deflated member whose sizes and CRC are in its local header: the viewer's zip reader
     * takes them from there, and {@link ZipOutputStream} would otherwise leave them for a data
     * descriptor after the data. It deflates as this method measures (default level, raw
     * deflate), and checks that the sizes agree.
     */
    private static void put(ZipOutputStream zip, String name, JsonNode json) throws IOException {
        byte[] content = JSON.writeValueAsBytes(json);
        CRC32 crc = new CRC32();
        crc.update(content);
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        long compressed = 0;
        try {
            deflater.setInput(content);
            deflater.finish();
            byte[] buffer = new byte[8192];
            while (!deflater.finished()) {
                compressed += deflater.deflate(buffer);
            }
        } finally {
            deflater.end();
        }
        ZipEntry entry = new ZipEntry(name);
        entry.setMethod(ZipEntry.DEFLATED);
        entry.setSize(content.length);
        entry.setCompressedSize(compressed);
        entry.setCrc(crc.getValue());
        zip.putNextEntry(entry);
        zip.write(content);
        zip.closeEntry();
    }
}

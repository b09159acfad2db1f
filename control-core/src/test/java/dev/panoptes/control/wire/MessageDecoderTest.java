package dev.panoptes.control.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one decoder reads a frame in normal form in a single pass and anything else again from its
 * tree. Whatever the single pass accepts must be exactly what the careful reading makes of it;
 * every frame either decodes to a message that survives a round trip or is a
 * {@link ProtocolException}, never another exception. Checked over many random mutations of
 * real frames and suite lines.
 */
class MessageDecoderTest {
    private final MessageCodec codec = new MessageCodec();
    private final MessageDecoder decoder = new MessageDecoder(codec.mapper());
    private final VignetteLineDecoder lines = new VignetteLineDecoder(codec.mapper(), decoder.payloads());
    private final JsonNodeFactory nodes = JsonNodeFactory.instance;

    private static final List<String> SUITE_LINES = List.of(
            "{\"id\":\"c1\",\"messages\":[{\"role\":\"system\",\"content\":\"be terse\"},"
                    + "{\"role\":\"user\",\"content\":\"2+2?\"}],\"expected\":\"4\",\"scorer\":\"numeric:0.01\","
                    + "\"metadata\":{\"topic\":\"math\",\"level\":3}}",
            "{\"id\":\"p1\",\"prompt\":\"hi\",\"scorer\":\"exact\",\"expected\":\"hello\"}");

    @Test
    void everyFrameThisCodecWritesIsReadInOnePass() throws Exception {
        for (Message m : MessageCodecTest.everyMessageType()) {
            byte[] body = codec.encode(m);
            assertThat(decoder.readInOnePass(body, 0, body.length)).as(m.type()).isEqualTo(m);
        }
    }

    @Test
    void aFrameOutOfNormalFormIsReadFromItsTree() {
        // "type" last, a field repeated (the last wins, as in a tree), a second "type" (likewise).
        assertThat(codec.decode(bytes("{\"workerId\":\"w\",\"capacity\":1,\"protocol\":1,\"type\":\"register\"}")))
                .contains(new Message.Register("w", 1));
        assertThat(codec.decode(bytes("{\"type\":\"heartbeat\",\"workerId\":7,\"workerId\":\"w\"}")))
                .contains(new Message.Heartbeat("w"));
        assertThat(codec.decode(bytes("{\"type\":\"drain\",\"reason\":\"x\",\"type\":\"rejected\"}")))
                .contains(new Message.Rejected("x"));
        assertThat(codec.decode(bytes("{\"type\":\"telemetry\",\"type\":\"drain\"}"))).contains(new Message.Drain());
    }

    @Test
    void invalidJsonIsNamedBeforeAWrongFieldThatPrecedesIt() {
        assertThatThrownBy(() -> codec.decode(bytes("{\"type\":\"register\",\"capacity\":\"2\"} x")))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> codec.vignette("{\"id\":7,\"prompt\":\"hi\"", "vignette"))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("not valid JSON");
    }

    @Test
    void theOnePassNeverDisagreesWithTheCarefulReadingOnMutatedFrames() throws Exception {
        int accepted = 0;
        int declined = 0;
        int onePass = 0;
        for (long seed = 0; seed < 5000; seed++) {
            Random random = new Random(seed);
            List<Message> all = MessageCodecTest.everyMessageType();
            JsonNode tree = codec.mapper().readTree(codec.encode(all.get(random.nextInt(all.size()))));
            int mutations = random.nextInt(4);
            for (int i = 0; i < mutations; i++) {
                mutate(tree, random);
            }
            byte[] body = maybeBreakBytes(codec.mapper().writeValueAsBytes(tree), random);
            String frame = new String(body, StandardCharsets.UTF_8);

            Optional<Message> careful;
            try {
                careful = decoder.decodeCarefully(body, 0, body.length);
            } catch (ProtocolException e) {
                assertThat(outcome(() -> codec.decode(body))).as("seed %d: %s", seed, frame)
                        .isEqualTo("rejected: " + e.getMessage());
                declined++;
                continue;
            }
            accepted++;
            assertThat(codec.decode(body)).as("seed %d: %s", seed, frame).isEqualTo(careful);
            try {
                assertThat(Optional.ofNullable(decoder.readInOnePass(body, 0, body.length)))
                        .as("seed %d: %s", seed, frame).isEqualTo(careful);
                onePass++;
            } catch (Exception | AssertionError e) {
                if (e instanceof AssertionError a) {
                    throw a;
                }
                // Declined by the single pass: fine, the careful reading took it.
            }
            if (careful.isPresent()) {
                assertThat(codec.decode(codec.encode(careful.get()))).as("seed %d round trip", seed).isEqualTo(careful);
            }
        }
        // Every outcome must be exercised for the comparison to mean anything.
        assertThat(accepted).isGreaterThan(300);
        assertThat(declined).isGreaterThan(300);
        assertThat(onePass).isGreaterThan(300);
    }

    @Test
    void everyMutatedSuiteLineIsAVignetteOrAProtocolErrorAlikeThroughEveryPath() throws Exception {
        int accepted = 0;
        int declined = 0;
        for (long seed = 0; seed < 3000; seed++) {
            Random random = new Random(seed);
            JsonNode tree = codec.mapper().readTree(SUITE_LINES.get(random.nextInt(SUITE_LINES.size())));
            int mutations = random.nextInt(4);
            for (int i = 0; i < mutations; i++) {
                mutate(tree, random);
            }
            String line = new String(maybeBreakBytes(codec.mapper().writeValueAsBytes(tree), random),
                    StandardCharsets.UTF_8);
            String viaLine = outcome(() -> codec.vignette(line, "vignette"));
            assertThat(viaLine).as("seed %d: %s", seed, line)
                    .isEqualTo(outcome(() -> lines.lineCarefully(line, "vignette")));
            if (viaLine.startsWith("rejected")) {
                declined++;
                assertThat(codec.vignettes(new java.io.ByteArrayInputStream(bytes(line)))).as(line).isEmpty();
            } else {
                accepted++;
                Vignette v = codec.vignette(line, "vignette");
                assertThat(codec.vignettes(new java.io.ByteArrayInputStream(bytes(line + "\n")))).as(line)
                        .contains(List.of(v));
            }
        }
        assertThat(accepted).isGreaterThan(300);
        assertThat(declined).isGreaterThan(300);
    }

    /** "accepted: ..." or "rejected: <the ProtocolException's message>"; any other exception fails the test. */
    private static String outcome(Supplier<Object> decoding) {
        try {
            return "accepted: " + decoding.get();
        } catch (ProtocolException e) {
            return "rejected: " + e.getMessage();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Changes one random node: a value's type, a field removed, added, duplicated or reordered. */
    private void mutate(JsonNode root, Random random) {
        List<ObjectNode> objects = new ArrayList<>();
        collectObjects(root, objects);
        ObjectNode target = objects.get(random.nextInt(objects.size()));
        List<String> names = new ArrayList<>();
        target.fieldNames().forEachRemaining(names::add);
        String name = names.isEmpty() ? "x" : names.get(random.nextInt(names.size()));
        switch (random.nextInt(8)) {
            case 0 -> target.remove(name);
            case 1 -> target.put(name, random.nextInt(100) - 50);
            case 2 -> target.put(name, "text");
            case 3 -> target.putNull(name);
            case 4 -> target.put("unknown" + random.nextInt(3), random.nextBoolean());
            case 5 -> target.set(name, nodes.arrayNode().add(1));
            case 6 -> {
                // Move the field to the end: order must not matter, except for "type" going first.
                JsonNode value = target.remove(name);
                if (value != null) {
                    target.set(name, value);
                }
            }
            default -> target.put(name, 1.5);
        }
    }

    private static void collectObjects(JsonNode node, List<ObjectNode> out) {
        if (node instanceof ObjectNode object) {
            out.add(object);
            for (Iterator<JsonNode> it = object.elements(); it.hasNext(); ) {
                collectObjects(it.next(), out);
            }
        } else if (node instanceof ArrayNode array) {
            for (JsonNode item : array) {
                collectObjects(item, out);
            }
        }
    }

    private static byte[] maybeBreakBytes(byte[] body, Random random) {
        return switch (random.nextInt(10)) {
            case 0 -> java.util.Arrays.copyOf(body, Math.max(1, body.length - 1 - random.nextInt(body.length)));
            case 1 -> (new String(body, StandardCharsets.UTF_8) + " {}").getBytes(StandardCharsets.UTF_8);
            case 2 -> {
                byte[] copy = body.clone();
                copy[random.nextInt(copy.length)] = (byte) (random.nextInt(256) - 128);
                yield copy;
            }
            default -> body;
        };
    }
}

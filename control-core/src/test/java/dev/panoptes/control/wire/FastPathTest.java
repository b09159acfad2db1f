package dev.panoptes.control.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.ProtocolException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The streaming fast path may decline any frame, but whatever it accepts must be exactly what
 * the careful tree decoder makes of it, and it must never accept what the careful decoder
 * rejects. Checked over many random mutations of real frames.
 */
class FastPathTest {
    private final MessageCodec codec = new MessageCodec();
    private final FastPath fast = new FastPath(codec.mapper());
    private final JsonNodeFactory nodes = JsonNodeFactory.instance;

    @Test
    void takesTheFramesThatFlowPerJob() {
        for (Message m : MessageCodecTest.everyMessageType()) {
            byte[] body = codec.encode(m);
            Message decoded = fast.decode(body, 0, body.length);
            boolean perJob = m instanceof Message.Result || m instanceof Message.Assign
                    || m instanceof Message.Heartbeat || m instanceof Message.Failed;
            if (perJob) {
                assertThat(decoded).as(m.type()).isEqualTo(m);
            } else {
                assertThat(decoded).as(m.type()).isNull();
            }
        }
    }

    @Test
    void neverDisagreesWithTheCarefulDecoderOnMutatedFrames() throws Exception {
        int accepted = 0;
        int declined = 0;
        List<Message> perJob = MessageCodecTest.everyMessageType().stream()
                .filter(m -> m instanceof Message.Result || m instanceof Message.Assign
                        || m instanceof Message.Heartbeat || m instanceof Message.Failed)
                .toList();
        for (long seed = 0; seed < 5000; seed++) {
            Random random = new Random(seed);
            // Mostly the frames the fast path takes, since those are where it could go wrong.
            List<Message> all = random.nextInt(5) == 0 ? MessageCodecTest.everyMessageType() : perJob;
            Message original = all.get(random.nextInt(all.size()));
            JsonNode tree = codec.mapper().readTree(codec.encode(original));
            int mutations = random.nextInt(4);
            for (int i = 0; i < mutations; i++) {
                mutate(tree, random);
            }
            byte[] body = maybeBreakBytes(codec.mapper().writeValueAsBytes(tree), random);

            Message viaFastPath = fast.decode(body, 0, body.length);
            Optional<Message> careful;
            try {
                careful = codec.decodeCarefully(body, 0, body.length);
            } catch (ProtocolException e) {
                assertThat(viaFastPath).as("seed %d accepted what the careful decoder rejects: %s (%s)", seed,
                        new String(body, StandardCharsets.UTF_8), e.getMessage()).isNull();
                declined++;
                continue;
            }
            if (viaFastPath == null) {
                declined++;
            } else {
                accepted++;
                assertThat(Optional.of(viaFastPath)).as("seed %d: %s", seed, new String(body, StandardCharsets.UTF_8))
                        .isEqualTo(careful);
            }
        }
        // Both outcomes must be exercised for the comparison to mean anything.
        assertThat(accepted).isGreaterThan(300);
        assertThat(declined).isGreaterThan(300);
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

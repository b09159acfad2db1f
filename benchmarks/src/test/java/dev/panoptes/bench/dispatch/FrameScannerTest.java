package dev.panoptes.bench.dispatch;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FrameScannerTest {
    @Test
    void countsEveryFrameOfAStreamCutAtRandomPoints() {
        Random random = new Random(42);
        ByteBuffer stream = ByteBuffer.allocate(200_000);
        int frames = 0;
        while (stream.remaining() > 1_000) {
            stream.put(FrameScanner.fillerFrame(1 + random.nextInt(300)));
            frames++;
        }
        stream.flip();
        FrameScanner scanner = new FrameScanner(1_000);
        int counted = 0;
        while (stream.hasRemaining()) {
            int cut = Math.min(stream.remaining(), 1 + random.nextInt(500));
            ByteBuffer piece = stream.slice().limit(cut);
            stream.position(stream.position() + cut);
            counted += scanner.scan(piece);
            assertThat(piece.hasRemaining()).isFalse();
        }
        assertThat(counted).isEqualTo(frames);
        assertThat(scanner.atFrameBoundary()).isTrue();
    }

    @Test
    void aFrameSplitInsideItsLengthPrefixStillCounts() {
        byte[] frame = FrameScanner.fillerFrame(10);
        FrameScanner scanner = new FrameScanner(100);
        assertThat(scanner.scan(ByteBuffer.wrap(frame, 0, 2))).isZero();
        assertThat(scanner.atFrameBoundary()).isFalse();
        assertThat(scanner.scan(ByteBuffer.wrap(frame, 2, frame.length - 2))).isEqualTo(1);
    }

    @Test
    void rejectsZeroAndOverLimitLengths() {
        assertThatThrownBy(() -> new FrameScanner(100).scan(ByteBuffer.wrap(new byte[] {0, 0, 0, 0})))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new FrameScanner(100).scan(ByteBuffer.wrap(FrameScanner.fillerFrame(101))))
                .isInstanceOf(IllegalStateException.class);
    }
}

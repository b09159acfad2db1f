package dev.panoptes.eval.http;

import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.impl.BasicEntityDetails;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class BodyBytesTest {
    private static FutureCallback<byte[]> into(CompletableFuture<byte[]> result) {
        return new FutureCallback<>() {
            @Override
            public void completed(byte[] bytes) {
                result.complete(bytes);
            }

            @Override
            public void failed(Exception ex) {
                result.completeExceptionally(ex);
            }

            @Override
            public void cancelled() {
                result.cancel(false);
            }
        };
    }

    private static byte[] text(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < n; i++) {
            b.append(i).append(',');
        }
        return b.substring(0, n).getBytes(StandardCharsets.US_ASCII);
    }

    /** Feeds {@code body} in pieces of {@code piece} bytes, as Apache does from the socket. */
    private static byte[] read(long declaredLength, byte[] body, int piece) throws Exception {
        BodyBytes consumer = new BodyBytes();
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        consumer.streamStart(new BasicEntityDetails(declaredLength, ContentType.APPLICATION_JSON), into(result));
        for (int at = 0; at < body.length; at += piece) {
            ByteBuffer src = ByteBuffer.wrap(body, at, Math.min(piece, body.length - at));
            consumer.consume(src);
            assertThat(src.hasRemaining()).isFalse();
        }
        consumer.streamEnd(List.of());
        assertThat(consumer.getContent()).isSameAs(result.getNow(null));
        return result.get();
    }

    @Test
    void aBodyWithoutALengthGrowsPastTheFirstBufferAndComesBackWhole() throws Exception {
        byte[] body = text(5000);
        assertThat(read(-1, body, 700)).isEqualTo(body);
    }

    @Test
    void aBodyOfTheDeclaredLengthComesBackWhole() throws Exception {
        byte[] body = text(3000);
        assertThat(read(body.length, body, 1024)).isEqualTo(body);
        assertThat(read(body.length, body, body.length)).isEqualTo(body);
    }

    @Test
    void aBodyLongerThanAnImplausibleDeclaredLengthIsStillReadAsItComes() throws Exception {
        byte[] body = text(10);
        assertThat(read(Long.MAX_VALUE, body, 3)).isEqualTo(body);
    }

    @Test
    void anEmptyBodyIsEmpty() throws Exception {
        assertThat(read(0, new byte[0], 1)).isEmpty();
        assertThat(read(-1, new byte[0], 1)).isEmpty();
    }

    @Test
    void aFailureReachesTheCallback() {
        BodyBytes consumer = new BodyBytes();
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        consumer.streamStart(new BasicEntityDetails(100, ContentType.APPLICATION_JSON), into(result));
        consumer.consume(ByteBuffer.wrap(text(10)));
        IOException cut = new IOException("connection closed");

        consumer.failed(cut);

        Throwable thrown = catchThrowable(result::get);
        assertThat(thrown).isInstanceOf(ExecutionException.class).hasCause(cut);
        assertThat(consumer.getContent()).isNull();
    }
}

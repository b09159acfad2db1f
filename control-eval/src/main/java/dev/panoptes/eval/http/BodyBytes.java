package dev.panoptes.eval.http;

import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.nio.AsyncEntityConsumer;
import org.apache.hc.core5.http.nio.CapacityChannel;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * A response body read whole into bytes, as Apache HttpClient's {@code BasicAsyncEntityConsumer}
 * reads it, minus what this client has no use for: that one parses the Content-Type header of
 * every answer (which {@link Answer} reads itself, and only when it must), and grows its buffer
 * from 1 KiB whatever the Content-Length says. This one sizes its buffer by the Content-Length,
 * when there is one and it is not implausibly large, so that a body is copied once.
 *
 * <p>One per exchange; Apache calls it on the I/O thread of the exchange's connection.
 */
final class BodyBytes implements AsyncEntityConsumer<byte[]> {
    /** The largest Content-Length trusted for the first buffer; a longer body grows it as it comes. */
    private static final int MAX_PRESIZE = 1 << 20;
    private static final int DEFAULT_SIZE = 1024;

    private byte[] buffer;
    private int length;
    private FutureCallback<byte[]> callback;
    private byte[] content;

    @Override
    public void streamStart(EntityDetails entityDetails, FutureCallback<byte[]> resultCallback) {
        this.callback = resultCallback;
        long declared = entityDetails == null ? -1 : entityDetails.getContentLength();
        buffer = new byte[declared > 0 && declared <= MAX_PRESIZE ? (int) declared : DEFAULT_SIZE];
        length = 0;
    }

    @Override
    public void updateCapacity(CapacityChannel capacityChannel) throws java.io.IOException {
        capacityChannel.update(Integer.MAX_VALUE);
    }

    @Override
    public void consume(ByteBuffer src) {
        int n = src.remaining();
        if (n == 0) {
            return;
        }
        if (length + n > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(buffer.length << 1, length + n));
        }
        src.get(buffer, length, n);
        length += n;
    }

    @Override
    public void streamEnd(List<? extends Header> trailers) {
        content = length == buffer.length ? buffer : Arrays.copyOf(buffer, length);
        buffer = null;
        if (callback != null) {
            callback.completed(content);
        }
    }

    @Override
    public void failed(Exception cause) {
        if (callback != null) {
            callback.failed(cause);
        }
        releaseResources();
    }

    @Override
    public byte[] getContent() {
        return content;
    }

    @Override
    public void releaseResources() {
        buffer = null;
    }
}

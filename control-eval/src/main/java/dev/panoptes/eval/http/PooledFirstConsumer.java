package dev.panoptes.eval.http;

import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.nio.AsyncResponseConsumer;
import org.apache.hc.core5.http.nio.CapacityChannel;
import org.apache.hc.core5.http.nio.support.BasicResponseConsumer;
import org.apache.hc.core5.http.protocol.HttpContext;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Apache HttpClient's {@link BasicResponseConsumer} buffering the body as bytes ({@link BodyBytes}), except that
 * it hands the answer over only when Apache releases it, which Apache does just after putting
 * the connection back in the pool. Apache would otherwise complete an exchange before that,
 * and the call a vignette chains from that completion would find the connection still taken
 * and open another one: two connections per job instead of one.
 *
 * <p>One per exchange; Apache calls it on the I/O thread of the exchange's connection.
 */
final class PooledFirstConsumer implements AsyncResponseConsumer<Message<HttpResponse, byte[]>> {
    private final BasicResponseConsumer<byte[]> buffered = new BasicResponseConsumer<>(new BodyBytes());
    /** The answer and whom to give it to, between the end of the body and the release. */
    private volatile Message<HttpResponse, byte[]> answer;
    private volatile FutureCallback<Message<HttpResponse, byte[]>> recipient;

    @Override
    public void consumeResponse(HttpResponse response, EntityDetails entityDetails, HttpContext context,
                                FutureCallback<Message<HttpResponse, byte[]>> resultCallback)
            throws HttpException, IOException {
        buffered.consumeResponse(response, entityDetails, context, new FutureCallback<>() {
            @Override
            public void completed(Message<HttpResponse, byte[]> result) {
                recipient = resultCallback;
                answer = result;
            }

            @Override
            public void failed(Exception ex) {
                resultCallback.failed(ex);
            }

            @Override
            public void cancelled() {
                resultCallback.cancelled();
            }
        });
    }

    @Override
    public void informationResponse(HttpResponse response, HttpContext context)
            throws HttpException, IOException {
        buffered.informationResponse(response, context);
    }

    @Override
    public void updateCapacity(CapacityChannel capacityChannel) throws IOException {
        buffered.updateCapacity(capacityChannel);
    }

    @Override
    public void consume(ByteBuffer src) throws IOException {
        buffered.consume(src);
    }

    @Override
    public void streamEnd(List<? extends Header> trailers) throws HttpException, IOException {
        buffered.streamEnd(trailers);
    }

    @Override
    public void failed(Exception cause) {
        buffered.failed(cause);
    }

    @Override
    public void releaseResources() {
        buffered.releaseResources();
        Message<HttpResponse, byte[]> a = answer;
        FutureCallback<Message<HttpResponse, byte[]>> r = recipient;
        answer = null;
        recipient = null;
        if (a != null && r != null) {
            r.completed(a);
        }
    }
}

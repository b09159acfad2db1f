package dev.panoptes.remote;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The count of connections that have not registered: caps in total and per address, and each
 * connection counted in once and out once, whichever way and however often it is released.
 */
class UnregisteredConnectionsTest {
    private static final InetAddress A = address("10.0.0.1");
    private static final InetAddress B = address("10.0.0.2");

    private final List<SocketChannel> channels = new ArrayList<>();

    @AfterEach
    void closeChannels() throws IOException {
        for (SocketChannel c : channels) {
            c.close();
        }
    }

    private SocketChannel channel() throws IOException {
        // Unconnected channels: the count only needs distinct objects that can be open or closed.
        SocketChannel c = SocketChannel.open();
        channels.add(c);
        return c;
    }

    private static UnregisteredConnections counting(int total, int perAddress) {
        return new UnregisteredConnections(ServerOptions.builder().maxUnregisteredConnections(total)
                .maxUnregisteredPerAddress(perAddress).build());
    }

    @Test
    void aConnectionBeyondEitherCapIsRefusedAndNotCounted() throws IOException {
        UnregisteredConnections u = counting(5, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(u.admit(channel(), A, 0)).isNull();
        }
        assertThat(u.admit(channel(), A, 0)).isEqualTo(UnregisteredConnections.Refusal.PER_ADDRESS);
        assertThat(u.admit(channel(), B, 0)).isNull();
        assertThat(u.admit(channel(), B, 0)).isNull();
        assertThat(u.admit(channel(), B, 0)).isEqualTo(UnregisteredConnections.Refusal.TOTAL);

        assertThat(u.count()).isEqualTo(5);
        assertThat(u.count(A)).isEqualTo(3);
        assertThat(u.count(B)).isEqualTo(2);
        assertThat(u.refused()).isEqualTo(2);
    }

    @Test
    void eachConnectionIsCountedOutExactlyOnceHoweverOftenItIsReleased() throws IOException {
        UnregisteredConnections u = counting(100, 100);
        List<SocketChannel> admitted = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            SocketChannel c = channel();
            assertThat(u.admit(c, i % 2 == 0 ? A : B, 0)).isNull();
            admitted.add(c);
        }

        int released = 0;
        for (SocketChannel c : admitted) {
            // At registration, then at close, then a sweep after the close: one of them counts.
            released += u.release(c) ? 1 : 0;
            released += u.release(c) ? 1 : 0;
            c.close();
            released += u.releaseClosed();
        }

        assertThat(released).isEqualTo(50);
        assertThat(u.count()).isZero();
        assertThat(u.count(A)).isZero();
        assertThat(u.count(B)).isZero();
        assertThat(u.addresses()).isZero();
        assertThat(u.release(channel())).as("a channel never admitted").isFalse();
        assertThat(u.count()).isZero();
    }

    @Test
    void aCapHeldByChannelsClosedWithoutAReleaseIsFreedByTheNextRefusalAtMostOncePerInterval() throws IOException {
        UnregisteredConnections u = counting(2, 2);
        SocketChannel first = channel();
        SocketChannel second = channel();
        u.admit(first, A, 0);
        u.admit(second, A, 0);
        // Closed without their release, as a channel closed before any loop adopted it.
        first.close();
        second.close();

        assertThat(u.admit(channel(), A, 0)).as("the refusal uncounts closed channels first").isNull();
        assertThat(u.count()).isEqualTo(1);
        SocketChannel fourth = channel();
        assertThat(u.admit(fourth, A, 10)).isNull();
        fourth.close();

        long nextSweep = UnregisteredConnections.SWEEP_INTERVAL_MS;
        assertThat(u.admit(channel(), A, nextSweep - 1)).as("no second sweep within the interval")
                .isEqualTo(UnregisteredConnections.Refusal.TOTAL);
        assertThat(u.admit(channel(), A, nextSweep)).isNull();
        assertThat(u.count()).isEqualTo(2);
        assertThat(u.refused()).isEqualTo(1);
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}

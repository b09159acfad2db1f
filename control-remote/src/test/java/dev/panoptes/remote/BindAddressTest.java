package dev.panoptes.remote;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BindAddressTest {
    @Test
    void aHostNameGivenAsTextIsLookedUpWhenTheServerBinds() throws IOException {
        ServerOptions options = ServerOptions.builder().bind(InetSocketAddress.createUnresolved("localhost", 0)).build();
        try (WorkerServer server = WorkerServer.start(options, new SharedPool())) {
            assertThat(server.address().getAddress().isLoopbackAddress()).isTrue();
            assertThat(server.address().getPort()).isPositive();
        }
    }

    @Test
    void aHostNameThatDoesNotResolveIsRefusedWithAdvice() {
        ServerOptions options = ServerOptions.builder()
                .bind(InetSocketAddress.createUnresolved("no-such-host.invalid", 7070)).build();
        assertThatThrownBy(() -> WorkerServer.start(options, new SharedPool()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no-such-host.invalid:7070")
                .hasMessageContaining("does not resolve");
    }
}

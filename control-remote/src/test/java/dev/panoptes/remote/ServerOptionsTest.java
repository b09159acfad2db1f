package dev.panoptes.remote;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ServerOptionsTest {

    @Test
    void defaultsFollowTheProtocol() {
        ServerOptions o = ServerOptions.defaults();

        assertThat(o.bind()).isEqualTo(new InetSocketAddress("127.0.0.1", 7070));
        assertThat(o.token()).isNull();
        assertThat(o.heartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.heartbeatTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(o.handshakeTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.maxFrameBytes()).isEqualTo(16 * 1024 * 1024);
        assertThat(o.maxCapacity()).isEqualTo(1024);
        assertThat(o.selectorThreads()).isBetween(1, 2);
        assertThat(o.completionThreads()).isEqualTo(2);
        assertThat(o.dispatchQueueCapacity()).isEqualTo(1024);
        assertThat(o.writeStallTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(o.handshakeFrameBytes()).isEqualTo(64 * 1024);
        assertThat(o.maxUnregisteredConnections()).isEqualTo(1024);
        assertThat(o.maxUnregisteredPerAddress()).isEqualTo(64);
    }

    @Test
    void theCapsOnUnregisteredConnectionsAreValidatedTogether() {
        assertThat(ServerOptions.builder().maxUnregisteredConnections(16).build().maxUnregisteredPerAddress())
                .as("the default per-address cap follows a smaller total cap down").isEqualTo(16);
        ServerOptions set = ServerOptions.builder().maxUnregisteredConnections(4096).maxUnregisteredPerAddress(512)
                .build();
        assertThat(set.maxUnregisteredConnections()).isEqualTo(4096);
        assertThat(set.maxUnregisteredPerAddress()).isEqualTo(512);
        assertThat(set.toString()).contains("maxUnregisteredConnections=4096, maxUnregisteredPerAddress=512");

        assertThatThrownBy(() -> ServerOptions.builder().maxUnregisteredConnections(0).build())
                .hasMessage("maxUnregisteredConnections must be at least 1, got 0");
        assertThatThrownBy(() -> ServerOptions.builder().maxUnregisteredPerAddress(0).build())
                .hasMessage("maxUnregisteredPerAddress must be at least 1, got 0");
        assertThatThrownBy(() -> ServerOptions.builder().maxUnregisteredConnections(16).maxUnregisteredPerAddress(32)
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("maxUnregisteredPerAddress (32) must not exceed maxUnregisteredConnections (16)")
                .hasMessageContaining("raise maxUnregisteredConnections too");
    }

    @Test
    void theHeartbeatTimeoutDefaultsToThreeIntervalsUnlessSet() {
        assertThat(ServerOptions.builder().heartbeatInterval(Duration.ofMillis(100)).build().heartbeatTimeout())
                .isEqualTo(Duration.ofMillis(300));
        assertThat(ServerOptions.builder().heartbeatInterval(Duration.ofMillis(100))
                .heartbeatTimeout(Duration.ofMillis(250)).build().heartbeatTimeout())
                .isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void aTimeoutNoLongerThanTheIntervalIsRefusedWithAdvice() {
        assertThatThrownBy(() -> ServerOptions.builder().heartbeatInterval(Duration.ofSeconds(5))
                .heartbeatTimeout(Duration.ofSeconds(5)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("heartbeatTimeout (5000 ms)").hasMessageContaining("3 x the interval");
    }

    @Test
    void outOfRangeValuesAreRefusedNamingTheOptionAndValue() {
        assertThatThrownBy(() -> ServerOptions.builder().maxCapacity(0).build())
                .hasMessage("maxCapacity must be at least 1, got 0");
        assertThatThrownBy(() -> ServerOptions.builder().selectorThreads(0).build())
                .hasMessage("selectorThreads must be at least 1, got 0");
        assertThatThrownBy(() -> ServerOptions.builder().completionThreads(-1).build())
                .hasMessage("completionThreads must be at least 1, got -1");
        assertThatThrownBy(() -> ServerOptions.builder().dispatchQueueCapacity(0).build())
                .hasMessage("dispatchQueueCapacity must be at least 1, got 0");
        assertThatThrownBy(() -> ServerOptions.builder().maxFrameBytes(10).build())
                .hasMessageContaining("maxFrameBytes must be at least 1024, got 10");
        assertThatThrownBy(() -> ServerOptions.builder().handshakeTimeout(Duration.ZERO).build())
                .hasMessageContaining("handshakeTimeout must be at least 1 ms");
        assertThatThrownBy(() -> ServerOptions.builder().heartbeatInterval(Duration.ofMillis(-5)).build())
                .hasMessageContaining("heartbeatInterval must be at least 1 ms");
        assertThatThrownBy(() -> ServerOptions.builder().writeStallTimeout(Duration.ZERO).build())
                .hasMessageContaining("writeStallTimeout must be at least 1 ms");
        assertThatThrownBy(() -> ServerOptions.builder().handshakeFrameBytes(100).build())
                .hasMessageContaining("handshakeFrameBytes must be at least 1024, got 100");
        assertThatThrownBy(() -> ServerOptions.builder().token("").build())
                .hasMessageContaining("token must not be empty");
        assertThatThrownBy(() -> ServerOptions.builder().bind(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void theHandshakeFrameLimitNeverExceedsTheFrameLimit() {
        assertThat(ServerOptions.builder().maxFrameBytes(2048).build().handshakeFrameBytes()).isEqualTo(2048);
        assertThat(ServerOptions.builder().writeStallTimeout(Duration.ofSeconds(2)).build().writeStallTimeout())
                .isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void theTokenNeverAppearsInToString() {
        assertThat(ServerOptions.builder().token("s3cret").build().toString())
                .contains("token=***").doesNotContain("s3cret");
    }
}

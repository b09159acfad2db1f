package dev.panoptes.remote;

import dev.panoptes.control.wire.Message;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The register rules on their own, without sockets. */
class HandshakeRulesTest {
    private final Handshake open = new Handshake(null, 16);
    private final Handshake guarded = new Handshake("s3cret", 16);

    private static Message.Register register(String id, int protocol, String token) {
        return new Message.Register(id, 1, protocol, token, Map.of());
    }

    @Test
    void aValidRegisterPasses() {
        assertThat(open.rejectionReason(register("w-1.a:b@c", 1, null))).isNull();
        assertThat(open.rejectionReason(register("w1", 1, "ignored when none is configured"))).isNull();
        assertThat(guarded.rejectionReason(register("w1", 1, "s3cret"))).isNull();
    }

    @Test
    void theTokenIsCheckedBeforeAnythingElse() {
        String reason = guarded.rejectionReason(register("bad id", 9, "wrong"));

        assertThat(reason).contains("wrong token").doesNotContain("protocol").doesNotContain("workerId");
    }

    @Test
    void tokensDifferingOnlyInLengthOrCaseAreRefused() {
        assertThat(guarded.rejectionReason(register("w1", 1, "s3cre"))).contains("wrong token");
        assertThat(guarded.rejectionReason(register("w1", 1, "s3cret "))).contains("wrong token");
        assertThat(guarded.rejectionReason(register("w1", 1, "S3CRET"))).contains("wrong token");
        assertThat(guarded.rejectionReason(register("w1", 1, null))).contains("requires a token");
    }

    @Test
    void aLongInvalidIdIsEchoedShortAndWithoutControlCharacters() {
        String reason = open.rejectionReason(register("\u001b[31m" + "x".repeat(500), 1, null));

        assertThat(reason).contains("invalid workerId").contains("...").contains("(505 characters)")
                .doesNotContain("\u001b").hasSizeLessThan(200);
    }

    @Test
    void capacityIsClampedToOneAndTheMaximum() {
        assertThat(open.clampCapacity(-3)).isEqualTo(1);
        assertThat(open.clampCapacity(0)).isEqualTo(1);
        assertThat(open.clampCapacity(7)).isEqualTo(7);
        assertThat(open.clampCapacity(16)).isEqualTo(16);
        assertThat(open.clampCapacity(Integer.MAX_VALUE)).isEqualTo(16);
    }
}

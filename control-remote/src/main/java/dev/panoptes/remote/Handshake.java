package dev.panoptes.remote;

import dev.panoptes.control.wire.Message;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.regex.Pattern;

/**
 * The rules a {@code register} frame must pass (PROTOCOL.md, "register fields"), kept apart
 * from the socket code so that they read as a list.
 *
 * <p>Immutable and thread-safe.
 */
final class Handshake {
    /** PROTOCOL.md: 1 to 128 characters from {@code [A-Za-z0-9._:@-]}. */
    static final Pattern WORKER_ID = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");
    /** How much of a rejected worker id is echoed back, so that a reason stays short. */
    private static final int ECHOED_ID_CHARS = 40;

    private final byte[] tokenDigest;
    private final int maxCapacity;

    Handshake(String token, int maxCapacity) {
        this.tokenDigest = token == null ? null : sha256(token);
        this.maxCapacity = maxCapacity;
    }

    /**
     * Checks a {@code register} frame. The token is checked first, so that a peer without it
     * learns nothing else.
     *
     * @return null when the worker may register, otherwise the reason to send in {@code rejected},
     *         written for the worker's operator
     */
    String rejectionReason(Message.Register register) {
        if (tokenDigest != null) {
            if (register.token() == null) {
                return "this coordinator requires a token and the register frame carried none; start the worker with --token";
            }
            // Digests first: MessageDigest.isEqual runs in time set by its first argument's
            // length, and comparing fixed-size digests leaks not even the token's length.
            if (!MessageDigest.isEqual(sha256(register.token()), tokenDigest)) {
                return "wrong token; check --token on the worker against the coordinator's";
            }
        }
        if (register.protocol() != Message.PROTOCOL_VERSION) {
            return "unsupported protocol version " + register.protocol() + "; this coordinator speaks version "
                    + Message.PROTOCOL_VERSION + ": run a worker of a matching release";
        }
        if (!WORKER_ID.matcher(register.workerId()).matches()) {
            return "invalid workerId '" + abbreviate(register.workerId()) + "' (" + register.workerId().length()
                    + " characters): use 1 to 128 characters from [A-Za-z0-9._:@-]";
        }
        return null;
    }

    /** PROTOCOL.md: below 1 counts as 1, above the coordinator's maximum as that maximum. */
    int clampCapacity(int requested) {
        return Math.max(1, Math.min(requested, maxCapacity));
    }

    private static String abbreviate(String id) {
        StringBuilder sb = new StringBuilder(Math.min(id.length(), ECHOED_ID_CHARS) + 3);
        for (int i = 0; i < id.length() && i < ECHOED_ID_CHARS; i++) {
            char c = id.charAt(i);
            // Control characters would garble the log line and the worker's terminal.
            sb.append(Character.isISOControl(c) ? '?' : c);
        }
        if (id.length() > ECHOED_ID_CHARS) {
            sb.append("...");
        }
        return sb.toString();
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            // Every Java platform must provide SHA-256 (java.security.MessageDigest's contract).
            throw new IllegalStateException("SHA-256 is not available on this JVM", e);
        }
    }
}

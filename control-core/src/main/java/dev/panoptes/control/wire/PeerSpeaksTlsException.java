package dev.panoptes.control.wire;

import dev.panoptes.control.ProtocolException;

/**
 * The first bytes of a plaintext connection are a TLS record (content type 0x14 to 0x17, then
 * version 0x03 0x00 to 0x04) where a frame's length should be: the peer speaks TLS and this side
 * does not. Thrown by {@link FrameDecoder} before its first frame; each side words the advice
 * (docs/PROTOCOL.md, "Transport security").
 */
public final class PeerSpeaksTlsException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    /** @param header the four bytes read as a length */
    PeerSpeaksTlsException(int header) {
        super(String.format("the peer speaks TLS: its first bytes (0x%02x 0x%02x 0x%02x) are a TLS record, not a"
                + " frame length", header >>> 24, (header >>> 16) & 0xff, (header >>> 8) & 0xff));
    }

    /** True when the four bytes read as a frame length start a TLS record. */
    static boolean isTlsRecordHeader(int header) {
        int type = header >>> 24;
        int major = (header >>> 16) & 0xff;
        int minor = (header >>> 8) & 0xff;
        return type >= 0x14 && type <= 0x17 && major == 0x03 && minor <= 0x04;
    }
}

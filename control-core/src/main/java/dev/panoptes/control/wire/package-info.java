/**
 * The coordinator-worker wire of PROTOCOL.md: the {@link dev.panoptes.control.wire.Message}s, their one JSON
 * codec ({@link dev.panoptes.control.wire.MessageCodec}, writing and streaming reading), and the length-prefixed
 * framing over blocking sockets and non-blocking buffers.
 */
package dev.panoptes.control.wire;

/**
 * TLS for the worker protocol's connections, over non-blocking sockets: {@link
 * dev.panoptes.remote.tls.TlsSession} puts the JDK's {@code SSLEngine} between an event loop's
 * socket and its framing (the coordinator's connections and the worker's session both use it),
 * and {@link dev.panoptes.remote.tls.PemFiles} loads the PEM certificates and keys the command
 * line names into an {@code SSLContext}.
 */
package dev.panoptes.remote.tls;

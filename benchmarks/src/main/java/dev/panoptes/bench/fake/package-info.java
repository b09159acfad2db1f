/**
 * The stand-ins the measurements run the product against, each a child JVM or its part: the
 * minimal fast fake worker and its streaming codec, the real WorkerSession with no-op runners, and
 * the self-signed key store for the TLS rows.
 */
package dev.panoptes.bench.fake;

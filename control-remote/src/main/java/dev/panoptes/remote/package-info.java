/**
 * The coordinator's side of the network: remote workers that the scheduler cannot tell from
 * local ones.
 *
 * <p>{@link dev.panoptes.remote.WorkerServer} listens, runs the {@code register} handshake of
 * PROTOCOL.md and keeps a {@link dev.panoptes.remote.SharedPool} in step with the registered
 * workers. Each connection is a {@code ConnectionActor} pinned to one of a few selector
 * threads ({@code SelectorLoop}); only that thread touches its socket and state. Callers reach
 * it through {@link dev.panoptes.remote.RemoteWorker#dispatch}, which puts the job on the
 * actor's bounded queue and wakes the selector. Answers complete the callers' futures on a
 * separate completion executor, so that no callback runs on, or stalls, a selector thread.
 *
 * <p>Every way a connection can end (end of stream, I/O error, protocol error, heartbeat
 * timeout, server close) fails every job pending or queued on it with a retryable
 * {@link dev.panoptes.control.WorkerException} whose message starts "worker connection lost".
 */
package dev.panoptes.remote;

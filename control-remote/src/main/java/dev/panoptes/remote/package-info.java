/**
 * The coordinator's side of the network: remote workers that the scheduler cannot tell from
 * local ones.
 *
 * <p>{@link dev.panoptes.remote.WorkerServer} listens, runs the {@code register} handshake of
 * docs/PROTOCOL.md and keeps a {@link dev.panoptes.remote.SharedPool} in step with the registered
 * workers. Each connection is a {@code ConnectionActor} pinned to one of a few selector threads
 * ({@code SelectorLoop}); only that thread touches its socket, its job table
 * ({@code PendingJobs}) and its clocks ({@code Liveness}). Callers reach it through
 * {@link dev.panoptes.remote.RemoteWorker#dispatch}, which encodes the job on the caller's thread,
 * puts it on the actor's bounded queue and wakes the selector. An actor's work is split three
 * ways: its bytes ({@code ConnectionTransport}, plain or TLS), its {@code register} handshake
 * ({@code RegistrationHandshake}) and its job traffic ({@code JobAssignments}). Answers complete
 * the callers' futures on a separate completion executor by default, so that no callback runs on,
 * or stalls, a selector thread; with {@link dev.panoptes.remote.ServerOptions#directCompletions()}
 * (for callers whose callbacks never block, as the coordinator command's scheduler) they are
 * completed on the selector thread that read them, inside a host's hand-off batch: the scheduler
 * then decides on that thread when its run's turn is free, and its dispatches leave in the same
 * pass. The server's listener always hears of workers
 * on its own events thread.
 *
 * <p>Every way a connection can end (end of stream, I/O error, protocol error, heartbeat or
 * write-stall timeout, a cancelled job never let go of, server close) removes the worker from the
 * pool and then fails every job pending on it with a retryable
 * {@link dev.panoptes.control.WorkerException} whose message starts "worker connection lost", and
 * every job still queued for it with a {@link dev.panoptes.control.DispatchRefusedException}: it
 * never reached the worker. A selector thread that dies closes the whole server and marks its
 * pool failed.
 */
package dev.panoptes.remote;

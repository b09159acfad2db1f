/**
 * In-process workers, which the scheduler cannot tell from remote ones: a
 * {@link dev.panoptes.control.local.LocalWorker} runs jobs on its own threads with the same failure
 * semantics as a worker across the network, and a {@link dev.panoptes.control.local.LocalPool} is a
 * {@link dev.panoptes.control.WorkerSource} of them. An
 * {@link dev.panoptes.control.local.AsyncLocalWorker} runs an
 * {@link dev.panoptes.control.AsyncJobRunner} (a model client's) in the coordinator's process, serving
 * named models as a remote worker does.
 *
 * <p><b>Threads.</b> Thread-safe; a job's future completes on the thread of the worker's pool that
 * ran it (an {@code AsyncLocalWorker}'s on its runner's thread), and cancelling it interrupts that
 * thread (stops the runner's calls).
 */
package dev.panoptes.control.local;

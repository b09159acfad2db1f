/**
 * In-process workers, which the scheduler cannot tell from remote ones: a
 * {@link dev.panoptes.control.local.LocalWorker} runs jobs on its own threads with the same failure
 * semantics as a worker across the network, and a {@link dev.panoptes.control.local.LocalPool} is a
 * {@link dev.panoptes.control.WorkerSource} of them.
 *
 * <p><b>Threads.</b> Thread-safe; a job's future completes on the thread of the worker's pool that
 * ran it, and cancelling it interrupts that thread.
 */
package dev.panoptes.control.local;

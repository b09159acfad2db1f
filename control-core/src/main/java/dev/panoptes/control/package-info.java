/**
 * What the coordinator and the workers share: the unit of work ({@link dev.panoptes.control.Job},
 * its {@link dev.panoptes.control.EvalSpec} of {@link dev.panoptes.control.Vignette}s) and its
 * answer ({@link dev.panoptes.control.JobOutcome}), the seams between scheduler and workers
 * ({@link dev.panoptes.control.WorkerHandle}, {@link dev.panoptes.control.WorkerSource}, and on the
 * worker's side {@link dev.panoptes.control.JobRunner} and {@link dev.panoptes.control.AsyncJobRunner}),
 * and the failures, each with the {@link dev.panoptes.control.FailureScope} that says whose it is.
 *
 * <p><b>Threads.</b> The records are immutable; handles, sources and {@link
 * dev.panoptes.control.WorkerSet} are thread-safe. {@link dev.panoptes.control.AsyncJobRunner#start}
 * runs on a worker session's one I/O thread and must never block.
 */
package dev.panoptes.control;

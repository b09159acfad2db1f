/**
 * The worker node: a session on one connection to the coordinator ({@link dev.panoptes.worker.WorkerSession}),
 * the loop that reconnects it ({@link dev.panoptes.worker.WorkerLoop}) and the process around them
 * ({@link dev.panoptes.worker.WorkerProcess}); {@link dev.panoptes.worker.Workers} and
 * {@link dev.panoptes.worker.WorkerOptions} are the face that embedders and harnesses use.
 */
package dev.panoptes.worker;

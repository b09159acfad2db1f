/**
 * Operating a fleet: the admin HTTP endpoint ({@link dev.panoptes.worker.admin.AdminServer},
 * {@code GET /metrics} in the Prometheus text format through Micrometer, and on the coordinator
 * {@code GET /status} as JSON), the meters of both sides ({@link
 * dev.panoptes.worker.admin.CoordinatorMetrics}, {@link dev.panoptes.worker.admin.WorkerMetrics}),
 * and the status view ({@link dev.panoptes.worker.admin.RunStatus}, {@link
 * dev.panoptes.worker.admin.StatusView}, {@link dev.panoptes.worker.admin.StatusTable}).
 *
 * <p>Everything here collects from the outside, through the libraries' seams
 * ({@code ProgressListener}, {@code WorkerServer.Listener}, {@code ResultStore},
 * {@code AsyncJobRunner}): the control-* modules do not know that Micrometer exists.
 */
package dev.panoptes.worker.admin;

/**
 * Operating a fleet: the admin HTTP endpoint ({@link dev.panoptes.admin.AdminServer},
 * {@code GET /metrics} in the Prometheus text format through Micrometer, and on the coordinator
 * {@code GET /status} as JSON), the meters of both sides ({@link
 * dev.panoptes.admin.CoordinatorMetrics}, {@link dev.panoptes.admin.WorkerMetrics}),
 * and the status view ({@link dev.panoptes.admin.RunStatus}, {@link
 * dev.panoptes.admin.StatusView}, {@link dev.panoptes.admin.StatusTable}).
 *
 * <p>Everything here collects from the outside, through the libraries' seams
 * ({@code ProgressListener}, {@code WorkerServer.Listener}, {@code ResultStore},
 * {@code AsyncJobRunner}): the control-* modules do not know that Micrometer exists.
 */
package dev.panoptes.admin;

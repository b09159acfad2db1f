/**
 * The coordinator application: one evaluation run from suite to summary ({@link dev.panoptes.coordinator.CoordinatorRun}
 * and its judge phase), the store it writes to and the locks that keep it to one coordinator, and what it tells the
 * console while it runs (progress, fleet, summary), and for a run on one machine the worker it runs in process
 * ({@link dev.panoptes.coordinator.ModelApiWorker}, on the model client of control-eval); it knows nothing of the
 * command line or of the worker process's code.
 */
package dev.panoptes.coordinator;

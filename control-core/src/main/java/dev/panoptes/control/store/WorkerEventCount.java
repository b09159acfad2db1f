package dev.panoptes.control.store;

/**
 * A worker's failures and quarantines in one run.
 *
 * @param workerId    the worker
 * @param failures    its failed attempts (any scope)
 * @param quarantines times it was quarantined
 */
public record WorkerEventCount(String workerId, long failures, long quarantines) {
}

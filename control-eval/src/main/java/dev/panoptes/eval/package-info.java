/**
 * Runs evaluation jobs against a chat model, whatever carries the calls: the {@link
 * dev.panoptes.eval.ModelClient} contract with its request and response, and the
 * {@link dev.panoptes.eval.EvalJobRunner} that sends a job's vignettes through one, concurrently within
 * a worker's {@link dev.panoptes.eval.RequestPermits} (its budget of requests in flight).
 */
package dev.panoptes.eval;

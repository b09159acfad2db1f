/**
 * The statistics of a run's scores: accuracy with a standard error that is cluster-robust over
 * repeated epochs and a Wilson interval ({@link dev.panoptes.control.stats.Accuracy}, {@link
 * dev.panoptes.control.stats.Estimate}), and the paired comparison of two models over the vignettes
 * both answered ({@link dev.panoptes.control.stats.PairedDifference}, with {@link
 * dev.panoptes.control.stats.StudentT}). Pure functions and immutable records: any thread.
 */
package dev.panoptes.control.stats;

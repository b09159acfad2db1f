/**
 * The response cache shared by the fleet: before a run dispatches a job, the answers its
 * vignettes' requests already got in any run of the same database ({@link dev.panoptes.control.RequestKey})
 * are stored as this run's, marked cached, and only the rest is sent to workers. It runs on the
 * coordinator's thread before the scheduler and hands the scheduler ordinary jobs, so the
 * scheduler never learns of it.
 */
package dev.panoptes.control.cache;

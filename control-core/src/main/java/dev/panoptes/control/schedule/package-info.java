/**
 * The scheduler: runs a list of jobs over a {@link dev.panoptes.control.WorkerSource} until each is
 * stored in a {@link dev.panoptes.control.store.ResultStore} or has failed for good, with retries,
 * deadlines, quarantine of failing workers, a limit per model API ({@link
 * dev.panoptes.control.schedule.EndpointGovernor}) and a store that may be down for a while.
 *
 * <p><b>Threads.</b> Every decision of a run is made on the one thread that calls {@link
 * dev.panoptes.control.schedule.Scheduler#run} (or steps a {@link dev.panoptes.control.schedule.SteppedRun});
 * the package-private parts of a run are owned by it and not thread-safe. Workers' answers arrive on
 * their threads, the store's writes happen on the writer's ({@code result-store}, unless a stepped
 * run writes inline), and both reach the run's thread through one event queue. {@link
 * dev.panoptes.control.schedule.ProgressListener} is called on the run's thread; {@link
 * dev.panoptes.control.schedule.EndpointGovernor} also hears of 429s on the threads that read
 * workers' frames.
 */
package dev.panoptes.control.schedule;

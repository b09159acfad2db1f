/**
 * The scheduler: runs a list of jobs over a {@link dev.panoptes.control.WorkerSource} until each is
 * stored in a {@link dev.panoptes.control.store.ResultStore} or has failed for good, with retries,
 * deadlines, quarantine of failing workers, a limit per model API ({@link
 * dev.panoptes.control.schedule.EndpointGovernor}) and a store that may be down for a while.
 *
 * <p><b>Threads.</b> Every decision of a run is made under the run's turn (a lock): on the thread
 * that calls {@link dev.panoptes.control.schedule.Scheduler#run} (or steps a {@link
 * dev.panoptes.control.schedule.SteppedRun}), or, while that thread waits, on a thread that delivers
 * answers as a {@linkplain dev.panoptes.control.HandOffBatch#openHost() host} (a selector thread
 * completing directly), which takes the turn only when it is free; the package-private parts of a
 * run are owned by whoever holds it and not thread-safe. Workers' answers arrive on their threads,
 * the store's writes happen on the writer's ({@code result-store}, unless a stepped run writes
 * inline), and both reach the run through one event queue, taken from only under the turn. {@link
 * dev.panoptes.control.schedule.ProgressListener} is called by the turn's holder; {@link
 * dev.panoptes.control.schedule.EndpointGovernor} also hears of 429s on the threads that read
 * workers' frames.
 */
package dev.panoptes.control.schedule;

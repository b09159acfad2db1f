package dev.panoptes.coordinator;

import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What the console says while a run waits for workers: none connected, or none that serves a
 * model the run asks for, with what to do about it (where workers should point, which models
 * they must serve, and why recent connections were refused). Called on the scheduler's thread,
 * as every {@link ProgressListener}; it only hands a line to the console.
 */
final class WaitingNotices implements ProgressListener {
    private final ProgressPrinter progress;
    private final FleetReporter fleet;
    private final InetSocketAddress address;

    WaitingNotices(ProgressPrinter progress, FleetReporter fleet, InetSocketAddress address) {
        this.progress = progress;
        this.fleet = fleet;
        this.address = address;
    }

    @Override
    public void onNoWorkerServes(Duration waited, Set<String> models, List<WorkerHandle> workers) {
        progress.message("no connected worker serves " + RunLines.describe(models) + " for " + waited.toSeconds()
                + " s; start workers whose model API serves it (connected: " + workers.size() + ")");
    }

    @Override
    public void onWaitingForWorkers(Duration waited) {
        progress.message("no worker connected for " + waited.toSeconds() + " s; are workers pointed at "
                + CoordinatorRun.hostPort(address) + "?" + fleet.rejectionsNote());
    }
}

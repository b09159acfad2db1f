package dev.panoptes.admin;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.store.ResultStore;

/** What {@link RunStatus} tells its metrics, once per event, already interpreted. */
public interface RunRecorder {
    /** Records nothing. */
    RunRecorder NONE = new RunRecorder() {
    };

    default void completed(Job job, JobOutcome outcome, ResultStore.Receipt receipt) {
    }

    /** A failed attempt is sent again; {@code scope}: refused, worker, transient (job ones are not retried). */
    default void redelivered(String scope) {
    }

    /** A job failed for good; {@code scope}: job, attempts_exhausted, no_worker. */
    default void failed(String scope) {
    }

    default void quarantined() {
    }

    default void registered() {
    }

    default void rejected() {
    }

    /** A worker's connection ended; {@code reason}: closed, silent, protocol, io, server_closed, other. */
    default void lost(String reason) {
    }
}

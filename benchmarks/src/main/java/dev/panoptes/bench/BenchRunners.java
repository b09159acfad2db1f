package dev.panoptes.bench;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The job runners the benchmark workers use in place of a model: they answer {@code "re: <prompt>"}
 * for each vignette, at once, after a fixed service time (the simulated job, which is the
 * workload of the scheduling measurement, not a synchronisation), or after holding the job for
 * minutes (so that a worker can be killed while it holds jobs).
 */
final class BenchRunners {
    private BenchRunners() {
    }

    /** The outcome an echo model gives: one record per vignette, {@code "re: <prompt>"}. */
    static JobOutcome echo(Job job) {
        List<Vignette> vignettes = job.spec().vignettes();
        List<ResponseRecord> records = new ArrayList<>(vignettes.size());
        for (Vignette v : vignettes) {
            records.add(new ResponseRecord(v.id(), "re: " + v.prompt()));
        }
        return new JobOutcome(job.id(), records);
    }

    /**
     * A runner by name: {@code echo}, {@code sleepNNN} (NNN microseconds of service time per job),
     * or {@code hold} (ten minutes, interruptible).
     */
    static JobRunner named(String name) {
        if (name.equals("echo")) {
            return BenchRunners::echo;
        }
        if (name.equals("hold")) {
            return job -> {
                TimeUnit.MINUTES.sleep(10);
                return echo(job);
            };
        }
        if (name.startsWith("sleep")) {
            long serviceNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(name.substring("sleep".length())));
            return job -> {
                waitFor(serviceNanos);
                return echo(job);
            };
        }
        throw new IllegalArgumentException("unknown runner '" + name + "': use echo, sleepMICROS or hold");
    }

    /** Parks until {@code nanos} have passed, going back to sleep after early wake-ups. */
    static void waitFor(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted during a simulated job");
            }
        }
    }
}

package dev.panoptes.bench.fake;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The job runners the benchmark workers use in place of a model: they answer {@code "re: <prompt>"}
 * for each vignette, at once, after a fixed service time (the simulated job, which is the
 * workload of the scheduling measurement, not a synchronisation), or after holding the job for
 * minutes (so that a worker can be killed while it holds jobs).
 *
 * <p>A timer on this VM wakes 100-200 us late, every time: a 1 ms job simulated with a plain park
 * takes 1.15 ms, and the scheduling measurement would charge that to the scheduler. So
 * {@code sleepNNN} measures the lateness of its timing mechanism once per JVM (the median over
 * 50 waits of 1 ms) and asks for that much less; {@code rawsleepNNN} does not, to show the
 * difference.
 */
public final class BenchRunners {
    private BenchRunners() {
    }

    /** The outcome an echo model gives: one record per vignette, {@code "re: <prompt>"}. */
    public static JobOutcome echo(Job job) {
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
    public static JobRunner named(String name) {
        if (name.equals("echo")) {
            return BenchRunners::echo;
        }
        if (name.equals("hold")) {
            return job -> {
                TimeUnit.MINUTES.sleep(10);
                return echo(job);
            };
        }
        if (name.startsWith("sleep") || name.startsWith("rawsleep")) {
            boolean raw = name.startsWith("raw");
            long serviceNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(name.substring(raw ? 8 : 5)));
            long waitNanos = raw ? serviceNanos : Math.max(0, serviceNanos - ParkLateness.NANOS);
            return job -> {
                waitFor(waitNanos);
                return echo(job);
            };
        }
        throw new IllegalArgumentException("unknown runner '" + name + "': use echo, sleepMICROS, rawsleepMICROS or"
                + " hold");
    }

    /** One thread for every simulated service time of the asynchronous runners. */
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-runner-timer");
        t.setDaemon(true);
        return t;
    });

    /**
     * The same runners, asynchronous, as the worker's session starts them: {@code echo} answers
     * at once, on the caller's thread (no hand-off at all); {@code sleepNNN} and {@code hold}
     * complete from one timer thread, so that no job holds a thread while it "runs".
     */
    public static AsyncJobRunner asyncNamed(String name) {
        if (name.equals("echo")) {
            return job -> CompletableFuture.completedFuture(echo(job));
        }
        long delayNanos;
        if (name.equals("hold")) {
            delayNanos = TimeUnit.MINUTES.toNanos(10);
        } else if (name.startsWith("sleep") || name.startsWith("rawsleep")) {
            boolean raw = name.startsWith("raw");
            long serviceNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(name.substring(raw ? 8 : 5)));
            delayNanos = raw ? serviceNanos : Math.max(0, serviceNanos - TimerLateness.NANOS);
        } else {
            throw new IllegalArgumentException("unknown runner '" + name + "': use echo, sleepMICROS, rawsleepMICROS"
                    + " or hold");
        }
        return job -> {
            CompletableFuture<JobOutcome> done = new CompletableFuture<>();
            ScheduledFuture<?> timer = TIMER.schedule(() -> done.complete(echo(job)), delayNanos, TimeUnit.NANOSECONDS);
            done.whenComplete((outcome, error) -> timer.cancel(false));
            return done;
        };
    }

    /** How late {@link #waitFor} wakes on this machine: the median over 50 waits of 1 ms, measured once. */
    private static final class ParkLateness {
        static final long NANOS = lateness(() -> {
            waitFor(1_000_000);
            return System.nanoTime();
        });
    }

    /** How late {@link #TIMER} runs a task on this machine: the median over 50 tasks 1 ms out, measured once. */
    private static final class TimerLateness {
        static final long NANOS = lateness(() -> TIMER.schedule(System::nanoTime, 1, TimeUnit.MILLISECONDS).get());
    }

    /** What a 1 ms wait that ends when {@code wait} returns (its end, in nanoTime) costs beyond 1 ms. */
    @FunctionalInterface
    private interface OneMilliWait {
        long await() throws Exception;
    }

    /** The median lateness of 50 one-millisecond waits; 0 when interrupted or failing. */
    private static long lateness(OneMilliWait wait) {
        long[] late = new long[50];
        for (int i = 0; i < late.length; i++) {
            long start = System.nanoTime();
            try {
                late[i] = wait.await() - start - 1_000_000;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 0;
            } catch (Exception e) {
                return 0;
            }
        }
        return median(late);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        // Never more than half a millisecond: a machine that late would be measured wrongly anyway.
        return Math.max(0, Math.min(500_000, sorted[sorted.length / 2]));
    }

    /** Parks until {@code nanos} have passed, going back to sleep after early wake-ups. */
    public static void waitFor(long nanos) throws InterruptedException {
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

package dev.panoptes.control;

import java.util.ArrayList;
import java.util.List;

/** Small jobs and runners for tests in every module (shipped in control-core's test-jar). */
public final class TestJobs {
    private TestJobs() {
    }

    /** A job whose vignettes are named v0, v1, ... with the given prompts. */
    public static Job job(String id, String... prompts) {
        List<Vignette> vignettes = new ArrayList<>();
        for (int i = 0; i < prompts.length; i++) {
            vignettes.add(new Vignette("v" + i, prompts[i]));
        }
        return new Job(JobId.of(id), new EvalSpec("test", vignettes));
    }

    /** {@code count} one-vignette jobs named prefix-0, prefix-1, ... */
    public static List<Job> jobs(String prefix, int count) {
        List<Job> jobs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            jobs.add(job(prefix + "-" + i, "prompt " + i));
        }
        return jobs;
    }

    /** The outcome an echo worker gives: "re: prompt" for each vignette. */
    public static JobOutcome echo(Job job) {
        List<ResponseRecord> records = new ArrayList<>();
        for (Vignette v : job.spec().vignettes()) {
            records.add(new ResponseRecord(v.id(), "re: " + v.prompt()));
        }
        return new JobOutcome(job.id(), records);
    }

    /** An asynchronous runner answering every job with {@link #echo(Job)} at once, on the caller's thread. */
    public static AsyncJobRunner asyncEchoRunner() {
        return job -> java.util.concurrent.CompletableFuture.completedFuture(echo(job));
    }

    /** A runner answering every job with {@link #echo(Job)}. */
    public static JobRunner echoRunner() {
        return TestJobs::echo;
    }
}

package dev.panoptes.control.suite;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Cuts a suite into jobs, deterministically: the same suite content, parameters and job size
 * always give the same jobs under the same ids, which is what lets a re-run against the same
 * store resume instead of starting over. Job ids are {@code <runId>-<index>} where the run id
 * is a hash of the suite's content, the parameters, the job size and a free-form label (use a
 * different label, or a different store, to run the same suite again from scratch, for example
 * against another model).
 *
 * @param runId the run's id, 16 hex characters
 * @param jobs  the jobs, in suite order
 */
public record JobPlan(String runId, List<Job> jobs) {
    public JobPlan {
        Objects.requireNonNull(runId, "runId");
        jobs = List.copyOf(jobs);
    }

    /**
     * Plans a run.
     *
     * @param suite   the suite
     * @param params  the model parameters every job carries
     * @param jobSize vignettes per job, at least 1; the last job may hold fewer
     * @param label   any text that should make this run distinct; empty for none
     * @throws IllegalArgumentException when jobSize is below 1
     */
    public static JobPlan of(Suite suite, SpecParams params, int jobSize, String label) {
        if (jobSize < 1) {
            throw new IllegalArgumentException("job size must be at least 1, got " + jobSize);
        }
        String runId = runId(suite, params, jobSize, Objects.requireNonNull(label, "label"));
        List<Vignette> all = suite.vignettes();
        int count = (all.size() + jobSize - 1) / jobSize;
        int digits = Math.max(4, String.valueOf(count - 1).length());
        List<Job> jobs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            List<Vignette> slice = all.subList(i * jobSize, Math.min(all.size(), (i + 1) * jobSize));
            String id = runId + "-" + zeroPadded(i, digits);
            jobs.add(new Job(JobId.of(id), new EvalSpec(suite.name(), slice, params)));
        }
        return new JobPlan(runId, jobs);
    }

    /** {@code value} in decimal, left-padded with zeros to {@code digits}; String.format is too slow for a million. */
    static String zeroPadded(int value, int digits) {
        String text = Integer.toString(value);
        return text.length() >= digits ? text : "0".repeat(digits - text.length()) + text;
    }

    /** The number of vignettes across all jobs. */
    public int vignetteCount() {
        return jobs.stream().mapToInt(Job::size).sum();
    }

    private static String runId(Suite suite, SpecParams params, int jobSize, String label) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            String key = suite.sha256() + "\n" + params + "\n" + jobSize + "\n" + label;
            byte[] digest = sha.digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}

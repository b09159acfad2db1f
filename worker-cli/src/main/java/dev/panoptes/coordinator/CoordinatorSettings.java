package dev.panoptes.coordinator;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.task.LoadedTask;
import dev.panoptes.eval.http.HttpModelClient;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything a coordinator run needs, validated by {@link CoordinatorCommand}.
 *
 * @param listen            where workers connect
 * @param suite             the JSONL suite file
 * @param db                the SQLite result database; with a PostgreSQL --db, its URL without
 *                          password, for display only (the run uses {@link DatabaseTarget})
 * @param jobSize           vignettes per job
 * @param label             extra text mixed into the run id (a fresh run of the same suite)
 * @param token             the shared secret workers must present, or null
 * @param params            model parameters sent with every job
 * @param maxAttempts       dispatches of a job before it is reported failed
 * @param waitForWorkers    how long the run may have no worker before giving up
 * @param heartbeatInterval how often the coordinator heartbeats
 * @param heartbeatTimeout  silence after which a worker is dropped
 * @param jobTimeout        the deadline of one attempt of a job; null for the default,
 *                          {@link #defaultJobTimeout(int)}
 * @param models            the models to evaluate, at least one
 * @param scorer            the run's scorer spec
 * @param epochs            times each vignette is asked of each model
 * @param fewShot           a JSONL file of examples put before every prompt, or null
 * @param groupBy           a metadata key to break accuracy down by, or null
 * @param task              the lm-eval task file read (its vignettes are the run's; {@code suite} is its
 *                          path), or null for a suite file
 */
public record CoordinatorSettings(InetSocketAddress listen, Path suite, Path db, int jobSize, String label, String token,
                           SpecParams params, int maxAttempts, Duration waitForWorkers, Duration heartbeatInterval,
                           Duration heartbeatTimeout, Duration jobTimeout, List<String> models, String scorer,
                           int epochs, Path fewShot, String groupBy, LoadedTask task) {
    public CoordinatorSettings {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(suite, "suite");
        Objects.requireNonNull(db, "db");
        Objects.requireNonNull(params, "params");
        label = label == null ? "" : label;
        jobTimeout = jobTimeout == null ? defaultJobTimeout(jobSize) : jobTimeout;
        models = List.copyOf(models);
        if (models.isEmpty()) {
            throw new IllegalArgumentException("a run needs at least one model");
        }
        scorer = scorer == null ? "exact" : scorer;
    }

    /** Settings of a suite file's run (no task file). */
    public CoordinatorSettings(InetSocketAddress listen, Path suite, Path db, int jobSize, String label, String token,
                               SpecParams params, int maxAttempts, Duration waitForWorkers, Duration heartbeatInterval,
                               Duration heartbeatTimeout, Duration jobTimeout, List<String> models, String scorer,
                               int epochs, Path fewShot, String groupBy) {
        this(listen, suite, db, jobSize, label, token, params, maxAttempts, waitForWorkers, heartbeatInterval,
                heartbeatTimeout, jobTimeout, models, scorer, epochs, fewShot, groupBy, null);
    }

    /**
     * One model call's budget per vignette, retries included ({@link HttpModelClient#DEFAULT_RETRY_BUDGET},
     * what the worker's client allows itself), since a job's vignettes are called one after
     * another: an attempt that takes longer than that is stuck, not slow.
     */
    static Duration defaultJobTimeout(int jobSize) {
        return HttpModelClient.DEFAULT_RETRY_BUDGET.multipliedBy(Math.max(1, jobSize));
    }

    /** Never prints the token. */
    @Override
    public String toString() {
        return "CoordinatorSettings[listen=" + listen + ", suite=" + suite + ", db=" + db + ", jobSize=" + jobSize
                + ", token=" + (token == null ? "none" : "***") + ", params=" + params + ", models=" + models
                + ", scorer=" + scorer + ", epochs=" + epochs + ", fewShot=" + fewShot + ", groupBy=" + groupBy + "]";
    }
}

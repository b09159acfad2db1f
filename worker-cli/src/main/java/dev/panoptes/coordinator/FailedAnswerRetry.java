package dev.panoptes.coordinator;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Plural;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.cache.ReducedJobsStore;
import dev.panoptes.control.store.FailedAnswerReset;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.ResultStore;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code --retry-failed}: on a resume, the run's failed answers (vignettes the model API gave no
 * answer for) are asked again. Before the run's jobs are sent, the failed answers are removed
 * from the store with their scores ({@link JdbcResultStore#resetFailedAnswers}), and each job
 * that held one is cut down to the vignettes it now lacks, so that the answers stored beside
 * them are not asked again (nor paid for). The new answer, good or failed again, is stored in the
 * old one's place: a (vignette, epoch) is stored once, so every figure counts it once.
 *
 * <p>Interrupted after the removal, the vignettes are simply missing: the same command asks them
 * again (and so would one without {@code --retry-failed}, only asking their whole jobs).
 *
 * <p>Runs on the coordinator's run thread; not thread-safe.
 */
final class FailedAnswerRetry {
    /** How many removed answers the console names one by one. */
    private static final int NAMED = 5;

    private final FailedAnswerReset reset;
    private final Set<JobId> reduced = new HashSet<>();

    private FailedAnswerRetry(FailedAnswerReset reset) {
        this.reset = reset;
    }

    /** Removes the failed answers of run {@code runId} from {@code store}. */
    static FailedAnswerRetry reset(JdbcResultStore store, String runId) {
        return new FailedAnswerRetry(store.resetFailedAnswers(runId));
    }

    /**
     * The jobs to run: those that held a removed answer cut down to the vignettes they lack (a
     * job that lacks all is left whole), the others as they are. Call once.
     */
    List<Job> jobsToRun(JdbcResultStore store, List<Job> jobs) {
        if (reset.answers().isEmpty()) {
            return jobs;
        }
        Set<String> touched = new HashSet<>();
        reset.answers().forEach(a -> touched.add(a.jobId()));
        Map<String, Set<String>> stored = store.answerCache().storedVignettes(reset.runId());
        List<Job> run = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            Set<String> have = stored.getOrDefault(job.id().value(), Set.of());
            if (!touched.contains(job.id().value()) || have.isEmpty()) {
                run.add(job);
                continue;
            }
            List<Vignette> left = new ArrayList<>();
            for (Vignette v : job.spec().vignettes()) {
                if (!have.contains(v.id())) {
                    left.add(v);
                }
            }
            if (left.isEmpty()) {
                run.add(job);
            } else {
                run.add(new Job(job.id(), new EvalSpec(job.spec().name(), left, job.spec().params()), job.runId(),
                        job.epoch()));
                reduced.add(job.id());
            }
        }
        return run;
    }

    /** The store to give the scheduler with {@link #jobsToRun}: {@code store} itself when no job was cut. */
    ResultStore storeFor(ResultStore store) {
        return reduced.isEmpty() ? store : new ReducedJobsStore(store, reduced);
    }

    /**
     * One line for the console: how many failed answers are asked again, naming the first few
     * with the error they had (which the store no longer holds).
     */
    String describe() {
        List<FailedAnswerReset.Removed> answers = reset.answers();
        if (answers.isEmpty()) {
            return "--retry-failed: run " + reset.runId() + " holds no failed answer; nothing to ask again";
        }
        StringBuilder line = new StringBuilder("--retry-failed: ").append(Plural.of(answers.size(), "failed answer"))
                .append(" removed, to be asked again (the new answer takes its place): ");
        for (int i = 0; i < Math.min(NAMED, answers.size()); i++) {
            FailedAnswerReset.Removed a = answers.get(i);
            line.append(i == 0 ? "" : "; ").append(a.vignetteId());
            if (a.model() != null) {
                line.append(" (").append(a.model()).append(a.epoch() == null ? "" : ", epoch " + a.epoch()).append(')');
            }
            String error = a.error();
            line.append(" had ").append(error.length() > 200 ? error.substring(0, 200) + "..." : error);
        }
        if (answers.size() > NAMED) {
            line.append("; and ").append(answers.size() - NAMED).append(" more");
        }
        return line.toString();
    }
}

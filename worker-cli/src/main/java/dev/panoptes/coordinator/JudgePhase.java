package dev.panoptes.coordinator;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Plural;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerSource;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.score.JudgeRubric;
import dev.panoptes.control.score.JudgeVerdictException;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.score.Score;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.JobFailure;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.store.ScoreEntry;
import dev.panoptes.control.store.StoredRecord;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Model-graded scoring: after a run's answers are stored, each answer waiting for a judge's
 * grade becomes one vignette of a grading job (its prompt, answer and expected answer put to the
 * judge model with the rubric) into the scoring it was made for, scheduled on the fleet like any
 * job, to workers that serve the judge model, with the same redelivery rules. A grade is stored once: the first verdict for an
 * answer stands. A verdict that is not readable JSON leaves the answer without a score and says
 * why in its explanation, so it counts as unscored rather than as wrong.
 *
 * <p>A failed answer never waits for a grade: every scoring gives it 0 (see
 * {@link dev.panoptes.control.store.FailedAnswers}), so it is never sent to the judge.
 *
 * <p>Grading job ids are the answer job's id followed by {@code -judge}; a run started again
 * grades only what is still waiting.
 */
final class JudgePhase {
    /** The judge's sampling: as deterministic as the API allows. */
    private static final double JUDGE_TEMPERATURE = 0.0;

    private final String runId;
    private final String defaultScorer;
    private final int jobSize;
    private final JdbcResultStore store;
    /** The scoring whose waiting answers this phase grades, and into which. */
    private final int scoring;
    private final Consumer<String> say;

    /** @param scoring the number of the run's scoring to grade (its answers that wait for a judge) */
    JudgePhase(String runId, String defaultScorer, int jobSize, JdbcResultStore store, int scoring,
               Consumer<String> say) {
        this.runId = runId;
        this.defaultScorer = defaultScorer;
        this.jobSize = jobSize;
        this.store = store;
        this.scoring = scoring;
        this.say = say;
    }

    /**
     * Whether any answer of a suite scored with {@code scorer} (the run's default) can wait for a
     * judge: only then is reading the run's answers back worth it.
     */
    static boolean judges(String scorer, List<Vignette> vignettes) {
        if (Scorers.isJudge(scorer)) {
            return true;
        }
        for (Vignette v : vignettes) {
            if (v.scorer() != null && Scorers.isJudge(v.scorer())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Grades every answer of the run that waits for a judge; returns at once when none does.
     *
     * @return the grading run's report, or null when nothing waited
     * @throws InterruptedException when the calling thread is interrupted
     */
    RunReport run(WorkerSource workers, SchedulerOptions options) throws InterruptedException {
        List<Job> jobs = gradingJobs();
        if (jobs.isEmpty()) {
            return null;
        }
        int answers = jobs.stream().mapToInt(Job::size).sum();
        say.accept("grading " + Plural.of(answers, "answer") + " with the judge model in "
                + Plural.of(jobs.size(), "job"));
        return new Scheduler(workers, new GradeStore(), options.withSkipCompleted(false)).run(jobs);
    }

    /** One grading job per answer job whose answers wait, each vignette an answer to grade. */
    List<Job> gradingJobs() {
        Map<String, List<StoredRecord>> waiting = new LinkedHashMap<>();
        store.forEachRecord(runId, scoring, r -> {
            if (r.score() != null && Scorers.isJudge(r.score().scorer()) && r.score().score() == null
                    && r.score().explanation() == null) {
                waiting.computeIfAbsent(r.jobId().value(), k -> new ArrayList<>()).add(r);
            }
        });
        List<Job> jobs = new ArrayList<>();
        for (Map.Entry<String, List<StoredRecord>> e : waiting.entrySet()) {
            List<StoredRecord> records = e.getValue();
            for (int from = 0; from < records.size(); from += jobSize) {
                List<StoredRecord> slice = records.subList(from, Math.min(records.size(), from + jobSize));
                String judge = judgeModel(slice.get(0));
                List<Vignette> vignettes = new ArrayList<>(slice.size());
                for (StoredRecord r : slice) {
                    vignettes.add(gradingVignette(r));
                }
                String suffix = records.size() <= jobSize ? "-judge" : "-judge" + (from / jobSize);
                SpecParams params = new SpecParams(null, JUDGE_TEMPERATURE, null, null, judge);
                jobs.add(new Job(JobId.of(e.getKey() + suffix), new EvalSpec("judge", vignettes, params), runId,
                        slice.get(0).context().epoch()));
            }
        }
        return jobs;
    }

    /**
     * The run's answers in this phase's scoring that a judge was to grade and that hold no grade:
     * their grading failed, is still to do, or the judge's reply was not a verdict. Reads the run's
     * records once; on the calling thread.
     */
    Ungraded ungraded() {
        long[] count = {0};
        String[] first = {null};
        store.forEachRecord(runId, scoring, r -> {
            if (r.score() != null && Scorers.isJudge(r.score().scorer()) && r.score().score() == null) {
                count[0]++;
                if (first[0] == null && r.score().explanation() != null) {
                    first[0] = r.record().vignetteId() + ": " + r.score().explanation();
                }
            }
        });
        return new Ungraded(count[0], first[0]);
    }

    /**
     * Answers left without a judge's grade.
     *
     * @param answers how many
     * @param first   the first one's vignette and why, or null when none says why
     */
    record Ungraded(long answers, String first) {
        static final Ungraded NONE = new Ungraded(0, null);
    }

    private String judgeModel(StoredRecord r) {
        String model = RunScoring.judgeModel(r.score().scorer());
        return model != null ? model : RunScoring.judgeModel(defaultScorer);
    }

    private static Vignette gradingVignette(StoredRecord r) {
        List<Map<String, String>> chat = JudgeRubric.messages(JudgeRubric.DEFAULT_RUBRIC,
                r.context().prompt() == null ? "" : r.context().prompt(), r.record().response(),
                r.context().expected());
        List<ChatMessage> messages = new ArrayList<>(chat.size());
        for (Map<String, String> m : chat) {
            messages.add(new ChatMessage(m.get("role"), m.get("content")));
        }
        return new Vignette(r.record().vignetteId(), null, null, Map.of(), messages, null);
    }

    /** The answer job a grading job grades. */
    static JobId answerJob(JobId gradingJob) {
        String id = gradingJob.value();
        return JobId.of(id.substring(0, id.lastIndexOf("-judge")));
    }

    /**
     * Where grading jobs' outcomes go: each verdict onto the answer it grades. Only this phase's
     * scheduler calls it, on its one thread.
     */
    private final class GradeStore implements ResultStore {
        private long duplicates;

        @Override
        public Receipt record(JobOutcome outcome, String workerId) {
            JobId answers = answerJob(outcome.jobId());
            int stored = 0;
            int dup = 0;
            for (ResponseRecord verdict : outcome.records()) {
                ScoreEntry grade = grade(verdict, workerId);
                if (store.recordGrade(answers, verdict.vignetteId(), scoring, grade)) {
                    stored++;
                } else {
                    dup++;
                }
            }
            duplicates += dup;
            return new Receipt(stored, dup);
        }

        private ScoreEntry grade(ResponseRecord verdict, String workerId) {
            String scorer = "judge:" + (verdict.model() == null ? "?" : verdict.model());
            try {
                Score s = JudgeRubric.parseVerdict(verdict.response());
                return new ScoreEntry(scorer, s.value(), s.explanation());
            } catch (JudgeVerdictException e) {
                return new ScoreEntry(scorer, null, "not graded: the judge's reply (from worker " + workerId
                        + ") was not a verdict: " + e.getMessage());
            }
        }

        @Override
        public void recordFailure(Job job, String reason, int attempts) {
            store.recordFailure(job, "grading failed: " + reason, attempts);
        }

        @Override
        public void recordFailure(JobId jobId, String reason, int attempts) {
            store.recordFailure(jobId, "grading failed: " + reason, attempts);
        }

        @Override
        public Set<String> storedVignetteIds(JobId jobId) {
            return Set.of();
        }

        @Override
        public long recordCount() {
            return store.recordCount();
        }

        @Override
        public long duplicateCount() {
            return duplicates;
        }

        @Override
        public void forEachRecord(Consumer<StoredRecord> action) {
            store.forEachRecord(runId, action);
        }

        @Override
        public void forEachFailure(Consumer<JobFailure> action) {
            store.forEachFailure(action);
        }

        @Override
        public void close() {
            // The run's store outlives this phase.
        }
    }
}

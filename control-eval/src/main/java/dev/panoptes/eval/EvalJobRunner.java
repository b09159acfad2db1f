package dev.panoptes.eval;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The eval workload: runs each vignette of a job's spec through a {@link ModelClient}, one call
 * after another in spec order, with the spec's parameters, and answers with exactly one
 * {@link ResponseRecord} per vignette (text, model, finish reason, latency, usage).
 *
 * <p>The first vignette that fails fails the whole job, and the vignettes after it are not
 * sent. The job fails as the vignette did, with the same {@link FailureScope}: a
 * {@link JobFailedException} (never retryable) when the model API rejected the request, a
 * {@link WorkerFaultException} when this worker is at fault (its model API's URL, key, model
 * or server), a plain {@link WorkerException} (retryable) when the client's own retries ran out
 * or anything unexpected happened. Either way the message names the job and the vignette, and
 * the client's exception is the cause.
 *
 * <p>Thread-safe when its client is, as {@link HttpModelClient} is: a worker runs several jobs
 * through one runner at once.
 */
public final class EvalJobRunner implements JobRunner {
    private static final Logger log = LoggerFactory.getLogger(EvalJobRunner.class);

    private final ModelClient client;

    /** @param client the model client every vignette is sent through */
    public EvalJobRunner(ModelClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * Runs the job's vignettes in spec order.
     *
     * @return one record per vignette, in spec order
     * @throws JobFailedException   naming the job and vignette, when a vignette can never succeed
     * @throws WorkerFaultException naming the job and vignette, when this worker is at fault and
     *                              another may succeed
     * @throws WorkerException      naming the job and vignette, when a vignette failed for a reason
     *                              that may pass
     * @throws InterruptedException when the thread is interrupted, between or during calls
     */
    @Override
    public JobOutcome run(Job job) throws InterruptedException {
        Objects.requireNonNull(job, "job");
        EvalSpec spec = job.spec();
        List<Vignette> vignettes = spec.vignettes();
        List<ResponseRecord> records = new ArrayList<>(vignettes.size());
        for (int i = 0; i < vignettes.size(); i++) {
            Vignette v = vignettes.get(i);
            if (Thread.interrupted()) {
                throw new InterruptedException("job " + job.id() + " interrupted before vignette '" + v.id() + "'");
            }
            String where = "job " + job.id() + ": vignette '" + v.id() + "' (" + (i + 1) + " of " + vignettes.size()
                    + ")";
            ModelResponse r;
            try {
                r = client.complete(new ModelRequest(v.prompt(), spec.params()));
            } catch (ControlException e) {
                throw rescoped(where, e);
            } catch (RuntimeException e) {
                throw new WorkerException(where + " failed unexpectedly: " + e, e);
            }
            if (r == null) {
                throw new WorkerException(where + ": the model client returned no response");
            }
            log.debug("{} answered by {} in {} ms", where, r.model(), r.latencyMs());
            records.add(new ResponseRecord(v.id(), r.text(), r.model(), r.finishReason(), r.latencyMs(),
                    r.usage()));
        }
        return new JobOutcome(job.id(), records);
    }

    /** The client's failure with the job and vignette in front, of the same scope. */
    private static ControlException rescoped(String where, ControlException e) {
        switch (e.scope()) {
            case WORKER:
                // The vignette says nothing about a worker's fault (any one would have failed), so
                // the cause comes first: it is what a quarantine line shows.
                return new WorkerFaultException(e.getMessage() + " (this worker's fault, met at " + where + ")", e);
            case JOB:
                return new JobFailedException(where + " failed permanently: " + e.getMessage(), e);
            default:
                return new WorkerException(where + " failed, may succeed if retried: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "EvalJobRunner[" + client + "]";
    }
}

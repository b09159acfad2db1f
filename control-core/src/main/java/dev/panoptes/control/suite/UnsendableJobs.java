package dev.panoptes.control.suite;

import dev.panoptes.control.Job;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The jobs of a plan whose {@code assign} frame would be bigger than the frame limit, found when
 * the run is planned, before anything runs: such a job can never be sent. Thanks to
 * {@link JobPlan}'s packing, a job that holds a vignette too big for the limit holds only that
 * vignette, so it fails alone.
 *
 * <p>Cheap for ordinary suites: a job is encoded only when an upper bound of its size is over
 * the limit. Stateless.
 */
public final class UnsendableJobs {
    /** Bytes of an assign frame beyond its vignettes (type, id, name, params), at most. */
    private static final long FRAME_OVERHEAD_BOUND = 1024;

    /**
     * A job that cannot be sent.
     *
     * @param job     the job
     * @param bytes   its assign frame's body, in bytes
     * @param problem one line saying which vignettes (with their file lines), how big, and what
     *                to do
     * @param repeat  true when an earlier job (of another model or epoch) holds the same
     *                vignettes: a console need not say it again
     */
    public record Unsendable(Job job, long bytes, String problem, boolean repeat) {
    }

    private UnsendableJobs() {
    }

    /**
     * The plan's jobs that cannot be sent under {@code maxFrameBytes}, in plan order, each with
     * its problem; a job of the same vignettes as an earlier one (another model or epoch) is
     * marked as a {@linkplain Unsendable#repeat repeat}.
     */
    public static List<Unsendable> of(JobPlan plan, Suite suite, int maxFrameBytes) {
        MessageCodec codec = new MessageCodec(Integer.MAX_VALUE);
        List<Unsendable> found = new ArrayList<>();
        Map<String, Integer> indexOf = null;
        // Only jobs over the cheap bound are encoded, and remembered: the other models and epochs
        // of the same vignettes need not be encoded again.
        Map<List<Vignette>, Long> measured = new HashMap<>();
        for (Job job : plan.jobs()) {
            List<Vignette> vignettes = job.spec().vignettes();
            long bound = FRAME_OVERHEAD_BOUND + 6L * (length(job.spec().params().system())
                    + length(job.spec().params().model()));
            for (int i = 0; i < vignettes.size(); i++) {
                bound += JobPlan.upperBound(vignettes.get(i));
            }
            if (bound <= maxFrameBytes) {
                continue;
            }
            Long known = measured.get(vignettes);
            long bytes = known != null ? known : codec.encode(new Message.Assign(job)).length;
            measured.putIfAbsent(vignettes, bytes);
            if (bytes <= maxFrameBytes) {
                continue;
            }
            if (indexOf == null) {
                indexOf = new HashMap<>();
                for (int i = 0; i < suite.vignettes().size(); i++) {
                    indexOf.put(suite.vignettes().get(i).id(), i);
                }
            }
            found.add(new Unsendable(job, bytes, problem(job, bytes, maxFrameBytes, suite, indexOf), known != null));
        }
        return found;
    }

    private static String problem(Job job, long bytes, int maxFrameBytes, Suite suite,
                                  Map<String, Integer> indexOf) {
        List<Vignette> vignettes = job.spec().vignettes();
        String where = where(suite, indexOf.get(vignettes.get(0).id()));
        String raise = "raise --max-frame-bytes on both sides (the coordinator and every worker) to at least "
                + bytes;
        String prefix = where + ": job " + job.id();
        if (vignettes.size() == 1) {
            return prefix + ": vignette '" + vignettes.get(0).id() + "' takes " + bytes + " bytes to send, more than"
                    + " the frame limit of " + maxFrameBytes + " bytes; it is not sent and its job is recorded as"
                    + " failed (a run with a larger limit sends it): " + raise + ", or shorten the vignette";
        }
        String last = where(suite, indexOf.get(vignettes.get(vignettes.size() - 1).id()));
        return prefix + " (" + vignettes.size() + " vignettes, to " + last + ") takes " + bytes + " bytes to send,"
                + " more than the frame limit of " + maxFrameBytes + " bytes; it is not sent and is recorded as failed"
                + " (a run with a larger limit sends it): " + raise + ", or lower --job-size";
    }

    /** "line 7", or "vignette 7" when the suite's lines are not known. */
    private static String where(Suite suite, int index) {
        return suite.lineOf(index).map(line -> "line " + line).orElse("vignette " + (index + 1));
    }

    private static long length(String s) {
        return s == null ? 0 : s.length();
    }
}

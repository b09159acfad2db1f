package dev.panoptes.control.suite;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.wire.MessageCodec;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Cuts a suite into jobs, deterministically: the same suite content, parameters and job size
 * always give the same jobs under the same ids, which is what lets a re-run against the same
 * store resume instead of starting over. The run id is {@link RunManifest#runId}: a hash of
 * everything that decides the answers (the suite's content, the model set, the parameters, the
 * epochs, the few-shot examples, the job size and a free-form label; use a different label, or a
 * different store, to run the same suite again from scratch).
 *
 * <p>A run may name models and ask each vignette several times (epochs): it is then the suite
 * times each model times each epoch. Job ids are {@code <runId>-<index>} for a run that names no
 * model and has one epoch (as before models existed), and
 * {@code <runId>-<model>-e<epoch>-<index>} otherwise, where {@code <model>} is the model's name
 * made safe for an id. A run that adds a model or epochs is another run, with other ids.
 *
 * <p>A job holds up to the job size of vignettes, fewer when they are big (see
 * {@link #MAX_JOB_VIGNETTE_BYTES}).
 *
 * <p>Immutable (the job list is copied), and planning reads nothing but its arguments: any thread.
 *
 * @param runId the run's id, 16 hex characters
 * @param jobs  the jobs, model by model, epoch by epoch, in suite order
 */
public record JobPlan(String runId, List<Job> jobs) {
    /**
     * The most encoded vignette bytes one job holds, unless a single vignette is bigger: 4 MiB,
     * well under the default frame limit (16 MiB) and independent of it.
     */
    public static final long MAX_JOB_VIGNETTE_BYTES = 4L * 1024 * 1024;
    /** Measures vignettes as an assign frame holds them; thread-safe. */
    private static final MessageCodec SIZES = new MessageCodec();

    public JobPlan {
        Objects.requireNonNull(runId, "runId");
        jobs = List.copyOf(jobs);
    }

    /**
     * Plans a run of one epoch that names no model: any worker answers with its own.
     *
     * @throws IllegalArgumentException when jobSize is below 1
     */
    public static JobPlan of(Suite suite, SpecParams params, int jobSize, String label) {
        return of(suite, params, jobSize, label, Collections.singletonList(null), 1);
    }

    /**
     * Plans a run.
     *
     * @param suite   the suite
     * @param params  the model parameters every job carries (their model is replaced by each of
     *                {@code models})
     * @param jobSize vignettes per job, at least 1; the last job may hold fewer
     * @param label   any text that should make this run distinct; empty for none
     * @param models  the models to ask, at least one, distinct; a single null names none
     * @param epochs  how many times to ask each vignette, at least 1. Epoch 0 is sent with the
     *                params' own seed (none when they have none), as a run of one epoch sends it;
     *                epoch {@code e > 0} with seed {@code (params.seed or 0) + e}, so that APIs
     *                that take a seed sample each epoch differently and reproducibly
     * @throws IllegalArgumentException when jobSize or epochs is below 1, or models is empty or
     *                                  has a duplicate
     */
    public static JobPlan of(Suite suite, SpecParams params, int jobSize, String label, List<String> models,
                             int epochs) {
        if (jobSize < 1) {
            throw new IllegalArgumentException("job size must be at least 1, got " + jobSize);
        }
        if (epochs < 1) {
            throw new IllegalArgumentException("epochs must be at least 1, got " + epochs);
        }
        if (models.isEmpty() || new HashSet<>(models).size() != models.size()) {
            throw new IllegalArgumentException("models must be at least one, each once, got " + models);
        }
        String runId = RunManifest.runId(suite.sha256(), models, params, epochs, null, jobSize,
                Objects.requireNonNull(label, "label"));
        return of(runId, suite, params, jobSize, models, epochs);
    }

    /**
     * Plans a run over a subset of the suite: the subset's vignettes in its order, under an id that
     * covers the subset (see {@link SuiteSubset}).
     *
     * @param suite  the whole suite, as read from its file
     * @param subset the vignettes to ask; {@link SuiteSubset#ALL} plans as
     *               {@link #of(Suite, SpecParams, int, String, List, int)}
     * @throws SuiteSubset.UnknownIdsException when the subset names an id the suite lacks
     * @throws IllegalArgumentException        as {@link #of(Suite, SpecParams, int, String, List, int)}
     */
    public static JobPlan of(Suite suite, SuiteSubset subset, SpecParams params, int jobSize, String label,
                             List<String> models, int epochs) {
        if (models.isEmpty()) {
            throw new IllegalArgumentException("models must be at least one, each once, got " + models);
        }
        Suite asked = subset.apply(suite);
        return of(asked, RunManifest.of("", suite.name(), asked, models, params, epochs, null, null, jobSize,
                Objects.requireNonNull(label, "label"), subset));
    }

    /**
     * Plans the run a manifest describes, under its id ({@link RunManifest#runId()}).
     *
     * @param suite the suite the manifest was made of (its content hash is the manifest's)
     * @throws IllegalArgumentException as {@link #of(Suite, SpecParams, int, String, List, int)},
     *                                  or when the suite is not the manifest's
     */
    public static JobPlan of(Suite suite, RunManifest manifest) {
        if (!suite.sha256().equals(manifest.suiteSha256())) {
            throw new IllegalArgumentException("suite " + suite.name() + " is not the one run " + manifest.runId()
                    + " was planned from (its sha256 differs)");
        }
        List<String> models = manifest.models().isEmpty() ? Collections.singletonList(null) : manifest.models();
        if (new HashSet<>(models).size() != models.size()) {
            throw new IllegalArgumentException("models must be at least one, each once, got " + models);
        }
        return of(manifest.runId(), suite, manifest.params(), manifest.jobSize(), models, manifest.epochs());
    }

    private static JobPlan of(String runId, Suite suite, SpecParams params, int jobSize, List<String> models,
                              int epochs) {
        List<Vignette> all = suite.vignettes();
        List<List<Vignette>> slices = slices(all, jobSize);
        int count = slices.size();
        int digits = Math.max(4, String.valueOf(count - 1).length());
        List<Job> jobs = new ArrayList<>(count * models.size() * epochs);
        boolean legacyIds = models.size() == 1 && models.get(0) == null && epochs == 1;
        for (String model : models) {
            String prefix = legacyIds ? runId + "-" : runId + "-" + modelKey(model) + "-e";
            for (int epoch = 0; epoch < epochs; epoch++) {
                SpecParams p = params.withModel(model);
                if (epoch > 0) {
                    // Epoch 0 is sent as a run of one epoch sends it (no seed unless --seed), so
                    // that adding epochs to a run reuses its answers instead of asking again.
                    p = p.withSeed((params.seed() == null ? 0 : params.seed()) + epoch);
                }
                String epochPrefix = legacyIds ? prefix : prefix + epoch + "-";
                IdWriter ids = IdWriter.of(epochPrefix, digits);
                for (int i = 0; i < count; i++) {
                    String id = ids == null ? epochPrefix + zeroPadded(i, digits) : ids.id(i);
                    jobs.add(new Job(JobId.of(id), new EvalSpec(suite.name(), slices.get(i), p), runId, epoch));
                }
            }
        }
        return new JobPlan(runId, jobs);
    }

    /**
     * Cuts the vignettes into jobs in suite order: a job ends at {@code jobSize} vignettes, or
     * before the vignette that would take its vignettes' encoded size past
     * {@link #MAX_JOB_VIGNETTE_BYTES}; a vignette bigger than that goes alone. The bound does not
     * depend on the frame limit, so that raising the limit never changes the plan (nor the ids a
     * resumed run looks for); and one big vignette never shares a job, so that if it cannot be
     * sent, no other vignette is lost with it.
     */
    private static List<List<Vignette>> slices(List<Vignette> all, int jobSize) {
        List<List<Vignette>> slices = new ArrayList<>((all.size() + jobSize - 1) / jobSize);
        int start = 0;
        // An upper bound of the job's encoded bytes so far, and their exact count once the bound
        // alone could not decide (-1 until then): most suites are never encoded here.
        long bound = 0;
        long exact = -1;
        for (int i = 0; i < all.size(); i++) {
            Vignette v = all.get(i);
            if (i > start && i - start == jobSize) {
                slices.add(slice(all, start, i));
                start = i;
                bound = 0;
                exact = -1;
            }
            long vBound = upperBound(v);
            if (exact < 0 && bound + vBound <= MAX_JOB_VIGNETTE_BYTES) {
                bound += vBound;
                continue;
            }
            if (exact < 0) {
                exact = 0;
                for (Vignette before : all.subList(start, i)) {
                    exact += SIZES.encodedSize(before);
                }
            }
            long size = SIZES.encodedSize(v);
            if (i > start && exact + size > MAX_JOB_VIGNETTE_BYTES) {
                slices.add(slice(all, start, i));
                start = i;
                exact = 0;
            }
            exact += size;
        }
        slices.add(slice(all, start, all.size()));
        return slices;
    }

    /**
     * The vignettes {@code [from, to)}: a job of one vignette gets an immutable list of it, which
     * {@link EvalSpec} keeps as it is, rather than a view it would copy (a million such views
     * were garbage the collector met while a suite of job size 1 was planned).
     */
    private static List<Vignette> slice(List<Vignette> all, int from, int to) {
        return to - from == 1 ? List.of(all.get(from)) : all.subList(from, to);
    }

    /**
     * Writes a plan's job ids, {@code prefix} and a zero-padded index, straight into the bytes of
     * each id's String: a million ids built by concatenation and {@link #zeroPadded} made about
     * five times their size in garbage while the suite was planned. Same text as
     * {@code prefix + zeroPadded(index, digits)}. One plan's loop only; not thread-safe.
     */
    static final class IdWriter {
        private final byte[] text;
        private final int prefixLength;

        private IdWriter(byte[] text, int prefixLength) {
            this.text = text;
            this.prefixLength = prefixLength;
        }

        /** A writer for ids of {@code digits} digits after {@code prefix}; null when the prefix is not Latin-1. */
        static IdWriter of(String prefix, int digits) {
            byte[] text = new byte[prefix.length() + digits];
            for (int i = 0; i < prefix.length(); i++) {
                char c = prefix.charAt(i);
                if (c > 0xff) {
                    return null;
                }
                text[i] = (byte) c;
            }
            return new IdWriter(text, prefix.length());
        }

        /** The id of index {@code index}, which has at most the writer's digits. */
        String id(int index) {
            int value = index;
            for (int at = text.length - 1; at >= prefixLength; at--) {
                text[at] = (byte) ('0' + value % 10);
                value /= 10;
            }
            if (value != 0 || index < 0) {
                throw new IllegalArgumentException(index + " has more than " + (text.length - prefixLength)
                        + " digits");
            }
            return new String(text, StandardCharsets.ISO_8859_1);
        }
    }

    /**
     * At least the bytes {@link MessageCodec#encodedSize} counts, cheaply: a UTF-16 char never
     * takes more than 6 bytes of JSON (an escape), plus room for the field names and quotes.
     * Metadata has no such cheap bound: it is measured exactly.
     */
    static long upperBound(Vignette v) {
        if (v.metadata() != null && !v.metadata().isEmpty()) {
            return SIZES.encodedSize(v);
        }
        long chars = length(v.id()) + length(v.prompt()) + length(v.expected()) + length(v.scorer());
        long overhead = 96;
        for (ChatMessage m : v.messages()) {
            chars += length(m.role()) + length(m.content());
            overhead += 32;
        }
        return overhead + 6 * chars;
    }

    private static long length(String s) {
        return s == null ? 0 : s.length();
    }

    /**
     * A model's name as it appears in job ids: letters, digits, '.', '_' and '-' kept, anything
     * else (such as the '/' of "meta-llama/Llama-3.1-8B") replaced by '_', at most 64 characters;
     * when anything was replaced or cut, 8 hex characters of the name's hash follow, so that two
     * names never share a key.
     */
    public static String modelKey(String model) {
        if (model == null) {
            return "any";
        }
        StringBuilder b = new StringBuilder(Math.min(model.length(), 64));
        boolean changed = model.length() > 64;
        for (int i = 0; i < model.length() && b.length() < 64; i++) {
            char c = model.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                    || c == '-') {
                b.append(c);
            } else {
                b.append('_');
                changed = true;
            }
        }
        if (changed) {
            b.append('~').append(HexFormat.of().formatHex(sha256(model), 0, 4));
        }
        return b.toString();
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

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}

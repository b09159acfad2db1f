package dev.panoptes.control.suite;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.panoptes.control.SpecParams;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Everything that decides a run's answers, with what describes it for people: the record a
 * result database keeps of each run (as JSON, see {@link #toJson()}), and the source of the run's
 * id.
 *
 * <p><b>Identity.</b> {@link #runId()} is the first 16 hex characters of the SHA-256 of the
 * identity fields only: the suite's content ({@code suiteSha256}), the set of models (sorted, so
 * that their order on the command line does not matter), the sampling parameters (system prompt,
 * temperature, max tokens, seed), the epochs, the few-shot file's content ({@code fewShotSha256}),
 * the job size, the label and the subset of the suite asked ({@link SuiteSubset}; a run of the
 * whole suite leaves it out, so that its id is what it was before subsets), the further sampling
 * options ({@code top_p}, stop sequences, extra request-body fields) and the model source (which
 * model server answers: {@link SpecParams#modelSource()}); each of these last is left out of the
 * hash when unset, for the same reason. Two commands that
 * agree on all of these ask the same questions of the same models in the same jobs, so they are
 * one run and the second resumes the first; a command that differs in any of them is another run.
 * The paths ({@code suite}, {@code fewShot}), the tool version, the vignette count (which
 * follows from the suite's content and the subset) and the metadata key its accuracy is broken
 * down by ({@code groupBy}) describe a run but do not change its id.
 * Neither does the scorer: scoring is not part of the answers' identity, and a run's answers may
 * carry several scorings.
 *
 * <p>Immutable ({@code models} is copied): any thread.
 *
 * @param format        the manifest format, {@value #FORMAT} for manifests this code writes
 * @param toolVersion   the Panoptes version that planned the run ("development build" when unknown)
 * @param suite         the suite file, as the user named it
 * @param suiteSha256   the SHA-256 of the suite's content, hex
 * @param vignettes     vignettes in the suite
 * @param models        the models asked, as given (in order); empty when the run names none
 * @param systemPrompt  the system prompt, or null
 * @param temperature   the sampling temperature, or null for the API's default
 * @param maxTokens     the answer length limit, or null for the API's default
 * @param seed          the sampling seed, or null
 * @param epochs        how many times each vignette is asked of each model, at least 1
 * @param fewShot       the few-shot examples file, as the user named it, or null
 * @param fewShotSha256 the SHA-256 of the few-shot file's content, hex; null when there is none
 * @param jobSize       vignettes per job, at least 1
 * @param label         the free-form label that makes a run distinct; empty for none
 * @param subset        which vignettes of the suite the run asks, in which order; null for the
 *                      whole suite in file order ({@link SuiteSubset#ALL} is stored as null)
 * @param topP          nucleus sampling's {@code top_p}, or null for the API's default
 * @param stop          the stop sequences, or null for none
 * @param extraBody     further request-body fields as a JSON object's text (keys sorted), or null
 * @param modelSource   what identifies the model server that answers, or null when unknown (see
 *                      {@link SpecParams#modelSource()})
 * @param groupBy       the metadata key the run's accuracy is broken down by ({@code --group-by}),
 *                      which the report and {@code runs show} use when not given one; null for none
 */
@JsonPropertyOrder({"format", "runId", "toolVersion", "suite", "suiteSha256", "vignettes", "models", "systemPrompt",
    "temperature", "maxTokens", "seed", "epochs", "fewShot", "fewShotSha256", "jobSize", "label", "subset", "topP", "stop", "extraBody", "modelSource",
    "groupBy"})
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.ALWAYS)
public record RunManifest(int format, String toolVersion, String suite, String suiteSha256, int vignettes,
                          List<String> models, String systemPrompt, Double temperature, Integer maxTokens, Long seed,
                          int epochs, String fewShot, String fewShotSha256, int jobSize, String label,
                          @JsonInclude(JsonInclude.Include.NON_NULL) SuiteSubset subset,
                          @JsonInclude(JsonInclude.Include.NON_NULL) Double topP,
                          @JsonInclude(JsonInclude.Include.NON_NULL) List<String> stop,
                          @JsonInclude(JsonInclude.Include.NON_NULL) String extraBody,
                          @JsonInclude(JsonInclude.Include.NON_NULL) String modelSource,
                          @JsonInclude(JsonInclude.Include.NON_NULL) String groupBy) {
    /** The manifest format this code writes. */
    public static final int FORMAT = 1;
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final ObjectMapper COMPACT = new ObjectMapper();

    /** @throws IllegalArgumentException when the suite hash is missing, or epochs or the job size is below 1 */
    public RunManifest {
        if (suiteSha256 == null || suiteSha256.isEmpty()) {
            throw new IllegalArgumentException("a run manifest needs the suite's SHA-256");
        }
        if (epochs < 1 || jobSize < 1) {
            throw new IllegalArgumentException("a run manifest needs epochs and a job size of at least 1, got "
                    + epochs + " and " + jobSize);
        }
        models = models == null ? List.of() : List.copyOf(models);
        label = label == null ? "" : label;
        subset = subset == null || subset.isAll() ? null : subset;
        stop = stop == null || stop.isEmpty() ? null : List.copyOf(stop);
        groupBy = groupBy == null || groupBy.isBlank() ? null : groupBy;
    }

    /** The manifest of a run not broken down by a metadata key. */
    public RunManifest(int format, String toolVersion, String suite, String suiteSha256, int vignettes,
                       List<String> models, String systemPrompt, Double temperature, Integer maxTokens, Long seed,
                       int epochs, String fewShot, String fewShotSha256, int jobSize, String label,
                       SuiteSubset subset, Double topP, List<String> stop, String extraBody, String modelSource) {
        this(format, toolVersion, suite, suiteSha256, vignettes, models, systemPrompt, temperature, maxTokens, seed,
                epochs, fewShot, fewShotSha256, jobSize, label, subset, topP, stop, extraBody, modelSource, null);
    }

    /**
     * This manifest with the metadata key its accuracy is broken down by (null or blank: none);
     * the run's id is the same.
     */
    public RunManifest withGroupBy(String key) {
        return new RunManifest(format, toolVersion, suite, suiteSha256, vignettes, models, systemPrompt, temperature,
                maxTokens, seed, epochs, fewShot, fewShotSha256, jobSize, label, subset, topP, stop, extraBody,
                modelSource, key);
    }

    /** The manifest of a run without the further sampling options and with no known model source. */
    public RunManifest(int format, String toolVersion, String suite, String suiteSha256, int vignettes,
                       List<String> models, String systemPrompt, Double temperature, Integer maxTokens, Long seed,
                       int epochs, String fewShot, String fewShotSha256, int jobSize, String label,
                       SuiteSubset subset) {
        this(format, toolVersion, suite, suiteSha256, vignettes, models, systemPrompt, temperature, maxTokens, seed,
                epochs, fewShot, fewShotSha256, jobSize, label, subset, null, null, null, null, null);
    }

    /** The manifest of a run of the whole suite, in file order. */
    public RunManifest(int format, String toolVersion, String suite, String suiteSha256, int vignettes,
                       List<String> models, String systemPrompt, Double temperature, Integer maxTokens, Long seed,
                       int epochs, String fewShot, String fewShotSha256, int jobSize, String label) {
        this(format, toolVersion, suite, suiteSha256, vignettes, models, systemPrompt, temperature, maxTokens, seed,
                epochs, fewShot, fewShotSha256, jobSize, label, null);
    }

    /**
     * The manifest of a run about to be planned.
     *
     * @param models        the models asked; empty, or a single null, when the run names none
     * @param fewShotSha256 null when there is no few-shot file
     */
    public static RunManifest of(String toolVersion, String suite, Suite content, List<String> models,
                                 SpecParams params, int epochs, String fewShot, String fewShotSha256, int jobSize,
                                 String label) {
        return of(toolVersion, suite, content, models, params, epochs, fewShot, fewShotSha256, jobSize, label,
                SuiteSubset.ALL);
    }

    /**
     * The manifest of a run about to be planned over a subset of its suite.
     *
     * @param content the suite as the subset asks it ({@link SuiteSubset#apply}): its vignettes are
     *                the ones counted
     * @param subset  the subset applied to the suite file, {@link SuiteSubset#ALL} for none
     */
    public static RunManifest of(String toolVersion, String suite, Suite content, List<String> models,
                                 SpecParams params, int epochs, String fewShot, String fewShotSha256, int jobSize,
                                 String label, SuiteSubset subset) {
        List<String> named = new ArrayList<>();
        for (String m : models) {
            if (m != null) {
                named.add(m);
            }
        }
        return new RunManifest(FORMAT, toolVersion, suite, content.sha256(), content.vignettes().size(), named,
                params.system(), params.temperature(), params.maxTokens(), params.seed(), epochs, fewShot,
                fewShotSha256, jobSize, label, subset, params.topP(), params.stop(), params.extraBody(),
                params.modelSource());
    }

    /** The run's id: see the class comment for what it covers. */
    @JsonProperty("runId")
    public String runId() {
        return runId(suiteSha256, models, params(), epochs, fewShotSha256, jobSize, label, subset);
    }

    /**
     * The id of a run with these identity fields (the fields of {@link #runId()}).
     *
     * @param models the models; nulls (a run that names none) are left out, order does not matter
     * @param params system prompt, temperature, max tokens, seed, top_p, stop sequences, extra body
     *               fields and model source count; the model does not
     */
    public static String runId(String suiteSha256, List<String> models, SpecParams params, int epochs,
                               String fewShotSha256, int jobSize, String label) {
        return runId(suiteSha256, models, params, epochs, fewShotSha256, jobSize, label, SuiteSubset.ALL);
    }

    /**
     * The id of a run with these identity fields over a subset of its suite.
     *
     * @param subset the subset; {@link SuiteSubset#ALL} or null gives the id of the whole suite's run
     */
    public static String runId(String suiteSha256, List<String> models, SpecParams params, int epochs,
                               String fewShotSha256, int jobSize, String label, SuiteSubset subset) {
        TreeSet<String> set = new TreeSet<>();
        for (String m : models) {
            if (m != null) {
                set.add(m);
            }
        }
        // Every text JSON-quoted, so that no value can pass for another field.
        String key = "panoptes run identity 1"
                + "\nsuite " + Objects.requireNonNull(suiteSha256, "suiteSha256")
                + "\nmodels " + quote(new ArrayList<>(set))
                + "\nsystem " + quote(params.system())
                + "\ntemperature " + params.temperature()
                + "\nmax-tokens " + params.maxTokens()
                + "\nseed " + params.seed()
                + "\nepochs " + epochs
                + "\nfew-shot " + fewShotSha256
                + "\njob-size " + jobSize
                + "\nlabel " + quote(label == null ? "" : label);
        if (subset != null && !subset.isAll()) {
            // Only with a subset: the whole suite's ids stay what they were before subsets.
            key += "\nsubset ids " + quote(subset.sampleIds()) + " shuffle " + subset.shuffleSeed()
                    + " limit " + subset.limit();
        }
        // Each only when set, for the same reason.
        if (params.topP() != null) {
            key += "\ntop-p " + params.topP();
        }
        if (params.stop() != null) {
            key += "\nstop " + quote(params.stop());
        }
        if (params.extraBody() != null) {
            key += "\nextra-body " + quote(params.extraBody());
        }
        if (params.modelSource() != null) {
            key += "\nmodel-source " + quote(params.modelSource());
        }
        return HexFormat.of().formatHex(sha256(key.getBytes(StandardCharsets.UTF_8)), 0, 8);
    }

    /** The parameters every job of the run carries (without a model: each job names its own). */
    @JsonIgnore
    public SpecParams params() {
        return new SpecParams(systemPrompt, temperature, maxTokens, seed, null, topP, stop, extraBody, modelSource);
    }

    /**
     * What differs between this (an earlier run) and {@code other} in the identity fields, each as
     * {@code "field old -> new"}, in the order of the class comment; empty when they are one run.
     */
    public List<String> identityDifferences(RunManifest other) {
        List<String> d = new ArrayList<>();
        if (!suiteSha256.equals(other.suiteSha256)) {
            d.add("suite content (sha256 " + suiteSha256.substring(0, Math.min(12, suiteSha256.length())) + "... -> "
                    + other.suiteSha256.substring(0, Math.min(12, other.suiteSha256.length())) + "...)");
        }
        if (!new TreeSet<>(models).equals(new TreeSet<>(other.models))) {
            d.add("models " + models + " -> " + other.models);
        }
        differs(d, "system prompt", systemPrompt == null ? null : quote(systemPrompt),
                other.systemPrompt == null ? null : quote(other.systemPrompt));
        differs(d, "temperature", temperature, other.temperature);
        differs(d, "max tokens", maxTokens, other.maxTokens);
        differs(d, "seed", seed, other.seed);
        differs(d, "epochs", epochs, other.epochs);
        if (!Objects.equals(fewShotSha256, other.fewShotSha256)) {
            d.add("few-shot examples " + describeFewShot() + " -> " + other.describeFewShot());
        }
        differs(d, "job size", jobSize, other.jobSize);
        differs(d, "label", quote(label), quote(other.label));
        differs(d, "top_p", topP, other.topP);
        differs(d, "stop sequences", stop == null ? null : quote(stop), other.stop == null ? null : quote(other.stop));
        differs(d, "extra request fields", extraBody, other.extraBody);
        differs(d, "model source", modelSource, other.modelSource);
        if (!Objects.equals(subset, other.subset)) {
            d.add("subset " + (subset == null ? "(none)" : subset.describe()) + " -> "
                    + (other.subset == null ? "(none)" : other.subset.describe()));
        }
        return d;
    }

    private String describeFewShot() {
        return fewShotSha256 == null ? "(none)" : (fewShot == null ? "" : fewShot + " ")
                + "(sha256 " + fewShotSha256.substring(0, Math.min(12, fewShotSha256.length())) + "...)";
    }

    private static void differs(List<String> d, String field, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            d.add(field + " " + (was == null ? "(none)" : was) + " -> " + (now == null ? "(none)" : now));
        }
    }

    /** The manifest as readable JSON: indented, fields in a fixed order, the run id included. */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a run manifest is plain data and always writes as JSON", e);
        }
    }

    /**
     * Reads a manifest written by {@link #toJson()} (the run id in it, derived, is ignored).
     *
     * @throws IllegalArgumentException when the text is not a run manifest
     */
    public static RunManifest fromJson(String json) {
        try {
            return COMPACT.readValue(json, RunManifest.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a run manifest: " + e.getOriginalMessage(), e);
        }
    }

    private static String quote(Object value) {
        try {
            return COMPACT.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("strings and lists of strings always write as JSON", e);
        }
    }

    static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}

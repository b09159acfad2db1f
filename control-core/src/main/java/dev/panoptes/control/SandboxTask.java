package dev.panoptes.control;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a vignette runs in a sandbox on the worker: the tools its model may call in a multi-turn
 * loop, the loop's limits, the files and setup commands that seed the sandbox's work folder, and
 * the check that scores the answer there. A suite line declares it as
 *
 * <pre>{@code
 * "sandbox": {"tools": ["bash", "python", "submit"], "limits": {"turns": 10, "tokens": 20000, "seconds": 120},
 *             "files": {"data.txt": "..."}, "setup": ["mkdir out"],
 *             "answerFile": "solution.py", "check": "python3 test_solution.py"}
 * }</pre>
 *
 * <p>Every field is optional: without tools the model answers in one turn (a code problem) and
 * only the check runs in the sandbox; without a check the answer is scored as any other.
 *
 * @param tools      the tools offered, each one of {@link #TOOLS}, no duplicates; empty for none
 * @param maxTurns   model turns at most, at least 1
 * @param maxTokens  tokens (prompt and completion, summed over the turns) at most, or null for no limit
 * @param wallTime   wall time of the whole sample at most, or null for no limit
 * @param files      files written into the work folder before anything runs: relative path to content
 * @param setup      shell commands run, in order, after the files are written and before the model's first turn
 * @param answerFile where the code of the model's final answer is written before the check, or
 *                   null to write none
 * @param check      a shell command run after the answer; exit status 0 passes, or null for no check
 */
public record SandboxTask(List<String> tools, int maxTurns, Long maxTokens, Duration wallTime,
                          Map<String, String> files, List<String> setup, String answerFile, String check) {
    /** The built-in tools. */
    public static final Set<String> TOOLS = Set.of("bash", "python", "submit");
    /** Turns at most when the vignette says nothing. */
    public static final int DEFAULT_TURNS = 20;

    /** @throws IllegalArgumentException naming the field that is wrong and what is allowed */
    public SandboxTask {
        tools = tools == null ? List.of() : List.copyOf(tools);
        for (String t : tools) {
            if (!TOOLS.contains(t)) {
                throw new IllegalArgumentException("sandbox.tools names '" + t + "', which is not a tool;"
                        + " the tools are bash, python and submit");
            }
        }
        if (Set.copyOf(tools).size() != tools.size()) {
            throw new IllegalArgumentException("sandbox.tools names a tool twice: " + tools);
        }
        if (maxTurns < 1) {
            throw new IllegalArgumentException("sandbox.limits.turns must be at least 1, got " + maxTurns);
        }
        if (maxTokens != null && maxTokens < 1) {
            throw new IllegalArgumentException("sandbox.limits.tokens must be at least 1, got " + maxTokens);
        }
        if (wallTime != null && (wallTime.isZero() || wallTime.isNegative())) {
            throw new IllegalArgumentException("sandbox.limits.seconds must be positive, got " + wallTime);
        }
        files = files == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(files));
        for (String path : files.keySet()) {
            relative(path, "sandbox.files");
        }
        setup = setup == null ? List.of() : List.copyOf(setup);
        if (answerFile != null) {
            relative(answerFile, "sandbox.answerFile");
        }
        if (check != null && check.isBlank()) {
            check = null;
        }
    }

    /** True when the model is offered tools, so the sample is a multi-turn loop. */
    public boolean hasTools() {
        return !tools.isEmpty();
    }

    /**
     * Reads the {@code sandbox} object of a suite line, as JSON values (maps, lists, strings, numbers).
     *
     * @throws IllegalArgumentException naming the field that is wrong
     */
    public static SandboxTask fromJson(Map<String, Object> json) {
        for (String key : json.keySet()) {
            if (!List.of("tools", "limits", "files", "setup", "answerFile", "check").contains(key)) {
                throw new IllegalArgumentException("sandbox has the field '" + key + "', which is not one of tools,"
                        + " limits, files, setup, answerFile and check");
            }
        }
        Map<String, Object> limits = map(json.get("limits"), "sandbox.limits");
        for (String key : limits.keySet()) {
            if (!List.of("turns", "tokens", "seconds").contains(key)) {
                throw new IllegalArgumentException("sandbox.limits has the field '" + key + "', which is not one of"
                        + " turns, tokens and seconds");
            }
        }
        Long turns = number(limits.get("turns"), "sandbox.limits.turns");
        Long tokens = number(limits.get("tokens"), "sandbox.limits.tokens");
        Long seconds = number(limits.get("seconds"), "sandbox.limits.seconds");
        Map<String, String> files = new LinkedHashMap<>();
        for (Map.Entry<String, Object> f : map(json.get("files"), "sandbox.files").entrySet()) {
            files.put(f.getKey(), string(f.getValue(), "sandbox.files." + f.getKey()));
        }
        return new SandboxTask(strings(json.get("tools"), "sandbox.tools"),
                turns == null ? DEFAULT_TURNS : Math.toIntExact(Math.min(turns, Integer.MAX_VALUE)), tokens,
                seconds == null ? null : Duration.ofSeconds(seconds), files, strings(json.get("setup"), "sandbox.setup"),
                string(json.get("answerFile"), "sandbox.answerFile"), string(json.get("check"), "sandbox.check"));
    }

    /** This task as the JSON values {@link #fromJson} reads. */
    public Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        if (!tools.isEmpty()) {
            json.put("tools", tools);
        }
        Map<String, Object> limits = new LinkedHashMap<>();
        limits.put("turns", maxTurns);
        if (maxTokens != null) {
            limits.put("tokens", maxTokens);
        }
        if (wallTime != null) {
            limits.put("seconds", wallTime.toSeconds());
        }
        json.put("limits", limits);
        if (!files.isEmpty()) {
            json.put("files", files);
        }
        if (!setup.isEmpty()) {
            json.put("setup", setup);
        }
        if (answerFile != null) {
            json.put("answerFile", answerFile);
        }
        if (check != null) {
            json.put("check", check);
        }
        return json;
    }

    private static void relative(String path, String what) {
        if (path == null || path.isEmpty() || path.startsWith("/") || path.indexOf('\0') >= 0
                || List.of(path.split("/")).contains("..")) {
            throw new IllegalArgumentException(what + " names '" + path + "': a path must be relative to the work"
                    + " folder and stay in it, e.g. 'src/main.py'");
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value, String what) {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException(what + " must be an object, got " + value);
        }
        return (Map<String, Object>) value;
    }

    private static List<String> strings(Object value, String what) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            throw new IllegalArgumentException(what + " must be an array of strings, got " + value);
        }
        List<String> out = new ArrayList<>();
        for (Object o : list) {
            out.add(string(o, what + "[" + out.size() + "]"));
        }
        return out;
    }

    private static String string(Object value, String what) {
        if (value != null && !(value instanceof String)) {
            throw new IllegalArgumentException(what + " must be a string, got " + value);
        }
        return (String) value;
    }

    private static Long number(Object value, String what) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Integer || value instanceof Long)) {
            throw new IllegalArgumentException(what + " must be a whole number, got " + value);
        }
        return ((Number) value).longValue();
    }
}

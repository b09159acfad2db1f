package dev.panoptes.control.score;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Spec {@code exact_match:{JSON}}: lm-evaluation-harness's {@code exact_match} metric of a
 * generation task, after its filter. The JSON object holds the task's
 * {@code regexes_to_ignore} (each removed from answer and expected answer, Python's
 * {@code re.sub}), {@code ignore_case}, {@code ignore_punctuation} (ASCII punctuation, Python's
 * {@code string.punctuation}) and {@code ignore_numbers}, and optionally {@code regex}: the
 * {@code regex} filter's {@code regex_pattern}, {@code group_select} and {@code fallback}, which
 * picks the answer out of the model's text first as lm-eval's {@code RegexFilter} does (Python's
 * {@code findall}: the pattern's group when it has one, the first non-empty of several, the whole
 * match when none; {@code group_select} may count from the end; stripped; the fallback when
 * nothing matches). Patterns are Java's, which read lm-eval's usual patterns as Python does.
 *
 * <p>Immutable and thread-safe.
 */
final class ExactMatchScorer extends SpecScorer {
    static final String NAME = "exact_match";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    private final List<Pattern> ignored = new ArrayList<>();
    private final boolean ignoreCase;
    private final boolean ignorePunctuation;
    private final boolean ignoreNumbers;
    private final Pattern filter;
    private final int groupSelect;
    private final String fallback;

    /** @throws IllegalArgumentException when the JSON is not an object of these options, or a pattern does not compile */
    ExactMatchScorer(String json) {
        super(NAME + ":" + json);
        JsonNode o;
        try {
            o = JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException("exact_match takes a JSON object of options, got " + json);
        }
        if (o == null || !o.isObject()) {
            throw new IllegalArgumentException("exact_match takes a JSON object of options, got " + json);
        }
        for (JsonNode r : o.path("regexes_to_ignore")) {
            ignored.add(compile(r.asText()));
        }
        ignoreCase = o.path("ignore_case").asBoolean(false);
        ignorePunctuation = o.path("ignore_punctuation").asBoolean(false);
        ignoreNumbers = o.path("ignore_numbers").asBoolean(false);
        JsonNode regex = o.get("regex");
        if (regex != null && regex.isObject()) {
            filter = compile(regex.path("regex_pattern").asText("#### (\\-?[0-9\\.\\,]+)"));
            groupSelect = regex.path("group_select").asInt(0);
            fallback = regex.path("fallback").asText("[invalid]");
        } else {
            filter = null;
            groupSelect = 0;
            fallback = null;
        }
    }

    private static Pattern compile(String regex) {
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("pattern /" + regex + "/ does not compile: " + e.getDescription(), e);
        }
    }

    @Override
    Score compare(String answer, String expected) {
        String filtered = filter == null ? answer : filter(answer);
        String a = normalize(filtered);
        String e = normalize(expected);
        boolean correct = a.equals(e);
        return new Score(correct ? 1 : 0, correct ? null : "answer '" + Texts.clip(filtered, 100)
                + "' after the filter, expected '" + Texts.clip(expected, 100) + "'");
    }

    /** lm-eval's RegexFilter on one answer. */
    private String filter(String answer) {
        List<String> matches = new ArrayList<>();
        Matcher m = filter.matcher(answer);
        while (m.find()) {
            if (m.groupCount() == 0) {
                matches.add(m.group());
            } else if (m.groupCount() == 1) {
                matches.add(m.group(1) == null ? "" : m.group(1));
            } else {
                String first = null;
                for (int g = 1; g <= m.groupCount() && first == null; g++) {
                    if (m.group(g) != null && !m.group(g).isEmpty()) {
                        first = m.group(g);
                    }
                }
                matches.add(first == null ? fallback : first);
            }
        }
        if (matches.isEmpty()) {
            return fallback;
        }
        int i = groupSelect < 0 ? matches.size() + groupSelect : groupSelect;
        if (i < 0 || i >= matches.size()) {
            // Python raises IndexError here; the answer gets the fallback, as one with no match.
            return fallback;
        }
        return matches.get(i).strip();
    }

    private String normalize(String text) {
        String s = text;
        for (Pattern p : ignored) {
            s = p.matcher(s).replaceAll("");
        }
        if (ignoreCase) {
            s = s.toLowerCase(Locale.ROOT);
        }
        if (ignorePunctuation || ignoreNumbers) {
            StringBuilder b = new StringBuilder(s.length());
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (ignorePunctuation && PUNCTUATION.indexOf(c) >= 0 || ignoreNumbers && c >= '0' && c <= '9') {
                    continue;
                }
                b.append(c);
            }
            s = b.toString();
        }
        return s;
    }
}

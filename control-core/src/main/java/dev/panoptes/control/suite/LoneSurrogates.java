package dev.panoptes.control.suite;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Vignette;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds text a suite's JSON escapes made that is not Unicode: a lone UTF-16 surrogate
 * ({@code "\\ud800"} with no low half after it, or a low half alone). UTF-8 cannot encode one, so
 * such a prompt could not be sent to a model as written (the request's encoder refuses it, or
 * turns it into {@code ?}, which would make different prompts one request); a suite holding one
 * is refused at load, naming its line, rather than failing its job after every attempt.
 *
 * <p>Stateless; any thread.
 */
final class LoneSurrogates {
    private LoneSurrogates() {
    }

    /**
     * One problem per vignette that holds a lone surrogate in what is sent (its turns) or compared
     * (its expected answer), naming the line, the field and where in it.
     *
     * @param lines each vignette's line in the file, in the order of {@code vignettes}
     */
    static List<String> problems(List<Vignette> vignettes, List<Integer> lines) {
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < vignettes.size(); i++) {
            Vignette v = vignettes.get(i);
            String where = find(v);
            if (where != null) {
                problems.add("line " + (i < lines.size() ? lines.get(i) : i + 1) + ": " + where + " holds a lone"
                        + " UTF-16 surrogate, which UTF-8 cannot encode, so it cannot be sent to a model as written;"
                        + " write the character it stands for (or both halves of its surrogate pair)");
            }
        }
        return problems;
    }

    private static String find(Vignette v) {
        if (v.messages().isEmpty()) {
            // Its one turn is its prompt: read as it is, not through a turn made for the purpose
            // (a million of them were garbage the collector met while a suite was read).
            int at = lone(v.prompt());
            if (at >= 0) {
                return "the prompt (" + escaped(v.prompt().charAt(at)) + " at character " + (at + 1) + ")";
            }
            return expected(v);
        }
        List<ChatMessage> turns = v.messages();
        for (int t = 0; t < turns.size(); t++) {
            int at = lone(turns.get(t).content());
            if (at >= 0) {
                String field = turns.size() == 1 && v.prompt() != null ? "the prompt" : "message " + (t + 1);
                return field + " (" + escaped(turns.get(t).content().charAt(at)) + " at character " + (at + 1) + ")";
            }
        }
        return expected(v);
    }

    private static String expected(Vignette v) {
        int at = lone(v.expected());
        return at < 0 ? null : "the expected answer (" + escaped(v.expected().charAt(at)) + " at character "
                + (at + 1) + ")";
    }

    /** The index of the first lone surrogate in {@code s}, or -1. */
    static int lone(String s) {
        if (s == null) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return i;
                }
            } else if (Character.isLowSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    private static String escaped(char c) {
        return String.format("\\u%04x", (int) c);
    }
}

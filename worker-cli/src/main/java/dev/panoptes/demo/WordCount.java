package dev.panoptes.demo;

/**
 * How {@link StubModelServer} counts tokens: the words of a text, as
 * {@code s.trim().split("\\s+").length} counts them (0 for a blank text), without the regular
 * expression that {@code split} compiles on every call.
 */
final class WordCount {
    private WordCount() {
    }

    /** The words in {@code s}: runs of characters other than {@code \s}, once {@code trim()} has cut its ends. */
    static int of(String s) {
        int start = 0;
        int end = s.length();
        // trim() cuts every character up to U+0020, a few more than \s holds (control characters).
        while (start < end && s.charAt(start) <= ' ') {
            start++;
        }
        while (end > start && s.charAt(end - 1) <= ' ') {
            end--;
        }
        int words = 0;
        boolean inWord = false;
        for (int i = start; i < end; i++) {
            boolean space = isSpace(s.charAt(i));
            if (!space && !inWord) {
                words++;
            }
            inWord = !space;
        }
        return words;
    }

    /** Whether {@code c} is in the regular expressions' {@code \s}: [ \t\n\x0B\f\r]. */
    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\013' || c == '\f' || c == '\r';
    }
}

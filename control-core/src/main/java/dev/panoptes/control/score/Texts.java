package dev.panoptes.control.score;

/** Small text helpers for explanations and error messages. */
final class Texts {
    private Texts() {
    }

    /**
     * Text cut to at most max characters, with a note saying how much was cut, so that one
     * huge answer cannot flood a log line or a stored explanation.
     */
    static String clip(String text, int max) {
        if (text.length() <= max) {
            return text;
        }
        return text.substring(0, max) + "... (" + (text.length() - max) + " more characters)";
    }
}

package dev.panoptes.control.suite;

import java.util.List;

/**
 * A suite file has problems; {@link #problems()} lists each with its line number, and the
 * message holds the first few, so a user can fix them all in one go.
 */
public class SuiteFormatException extends Exception {
    private static final long serialVersionUID = 1L;
    private static final int SHOWN = 10;

    /** The problems found, each starting with "line N: ". */
    private final List<String> problems;

    public SuiteFormatException(String source, List<String> problems) {
        super(message(source, problems));
        this.problems = List.copyOf(problems);
    }

    /** Every problem found, in line order. */
    public List<String> problems() {
        return problems;
    }

    private static String message(String source, List<String> problems) {
        StringBuilder sb = new StringBuilder();
        sb.append(source).append(" has ").append(problems.size())
                .append(problems.size() == 1 ? " problem" : " problems").append(':');
        for (String p : problems.subList(0, Math.min(SHOWN, problems.size()))) {
            sb.append("\n  ").append(source).append(':').append(p.substring("line ".length()));
        }
        if (problems.size() > SHOWN) {
            sb.append("\n  ... and ").append(problems.size() - SHOWN).append(" more");
        }
        return sb.toString();
    }
}

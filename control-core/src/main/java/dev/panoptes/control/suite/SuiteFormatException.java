package dev.panoptes.control.suite;

import java.util.List;

/**
 * A suite file has problems; {@link #problems()} lists each with its line number, and the
 * message holds the first few, so a user can fix them all in one go.
 */
public class SuiteFormatException extends Exception {
    private static final long serialVersionUID = 1L;
    private static final int SHOWN = 10;

    /** The problems found, each starting with "line N: " (JSONL) or "row N: " (CSV). */
    private final List<String> problems;

    public SuiteFormatException(String source, List<String> problems) {
        super(message(source, problems));
        this.problems = List.copyOf(problems);
    }

    /** Every problem found, in line order. */
    public List<String> problems() {
        return problems;
    }

    /** "line 3: x" and "row 3: x" as "3: x", so that it reads file:3: x; anything else as it is. */
    private static String withoutUnit(String problem) {
        for (String unit : new String[] {"line ", "row "}) {
            if (problem.startsWith(unit) && problem.length() > unit.length()
                    && Character.isDigit(problem.charAt(unit.length()))) {
                return problem.substring(unit.length());
            }
        }
        return " " + problem;
    }

    private static String message(String source, List<String> problems) {
        StringBuilder sb = new StringBuilder();
        sb.append(source).append(" has ").append(problems.size())
                .append(problems.size() == 1 ? " problem" : " problems").append(':');
        for (String p : problems.subList(0, Math.min(SHOWN, problems.size()))) {
            // A problem that names its own file (an included one, say) is printed as it is.
            sb.append("\n  ").append(p.startsWith(source) ? p : source + ':' + withoutUnit(p));
        }
        if (problems.size() > SHOWN) {
            sb.append("\n  ... and ").append(problems.size() - SHOWN).append(" more");
        }
        return sb.toString();
    }
}

package dev.panoptes.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Which run a {@code --run} option names, for every command that reads runs ({@code results},
 * {@code report}, {@code rescore}, {@code compare}): a whole run id, or its first
 * {@value #MIN_PREFIX} or more hexadecimal characters when they start exactly one run of the
 * database (the consoles print whole ids; a user copies the first part). Stateless; any thread.
 */
final class RunSelector {
    /** The fewest characters of a run id that name it: fewer would collide too often to be safe to type. */
    static final int MIN_PREFIX = 8;
    private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]+");

    private RunSelector() {
    }

    /**
     * The id of the run {@code given} names among {@code ids}.
     *
     * @param ids   the runs the database holds ({@code RunDataLoader.runIds})
     * @param given what the user typed after {@code --run}
     * @param where the database in messages: "the database", or its file or URL
     * @return the whole run id
     * @throws ParameterException when no run has that id or prefix, when the prefix starts more
     *                            than one run (naming them), or when it is too short to be a prefix
     */
    static String resolve(CommandSpec spec, List<String> ids, String given, String where) {
        return resolve(spec, ids, given, where, "option '--run'");
    }

    /**
     * As {@link #resolve(CommandSpec, List, String, String)}, for a run named by another option
     * or parameter.
     *
     * @param named how messages name what the user typed it into: "option '--run'", "positional parameter 'ID'"
     */
    static String resolve(CommandSpec spec, List<String> ids, String given, String where, String named) {
        if (ids.contains(given)) {
            return given;
        }
        String prefix = given.toLowerCase(Locale.ROOT);
        List<String> candidates = new ArrayList<>();
        if (HEX.matcher(given).matches()) {
            for (String id : ids) {
                if (id.startsWith(prefix)) {
                    candidates.add(id);
                }
            }
        }
        if (candidates.size() == 1 && prefix.length() >= MIN_PREFIX) {
            return candidates.get(0);
        }
        String message;
        if (candidates.size() > 1 && prefix.length() >= MIN_PREFIX) {
            message = "'" + given + "' starts " + candidates.size() + " runs of " + where + ": "
                    + String.join(", ", candidates) + "; give more of the id";
        } else if (!candidates.isEmpty()) {
            message = "'" + given + "' is too short to name a run: give the whole id or its first " + MIN_PREFIX
                    + " or more characters (" + (candidates.size() == 1 ? "the run" : "runs") + " it starts: "
                    + String.join(", ", candidates) + ")";
        } else {
            message = where + " holds no run '" + given + "'" + (ids.isEmpty() ? " (it holds none)"
                    : "; it holds " + String.join(", ", ids) + " (a run id, or its first " + MIN_PREFIX
                    + " or more characters)");
        }
        throw new ParameterException(spec.commandLine(), "Invalid value for " + named + ": " + message);
    }
}

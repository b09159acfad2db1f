package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.report.RunDataLoader;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;

import java.util.List;

/**
 * A command about one stored run, named by its id or a prefix of it ({@link RunSelector}) as its
 * parameter, or by {@code --run}: {@code runs show} and {@code runs delete}. The command's thread only.
 */
abstract class StoredRunCommand extends StoredRunsCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "ID",
            description = "The run: its id (in the coordinator's summary and in 'runs') or the id's first 8 or more"
                    + " characters.")
    String id;

    /**
     * The whole id of the run named.
     *
     * @throws ParameterException when none is named, both ID and --run name different ones, or the
     *                            database holds no such run (or several start with the prefix)
     */
    String runId(JdbcResultStore store) {
        if (id != null && database.run != null && !id.equals(database.run)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--run': " + database.run
                    + " names another run than the parameter " + id + "; give one of them");
        }
        String given = id != null ? id : database.run;
        if (given == null) {
            throw new ParameterException(spec.commandLine(), "Missing required parameter: 'ID' (the run; 'runs' lists"
                    + " them)");
        }
        List<String> ids = RunDataLoader.runIds(store);
        ids.remove(RunDataLoader.NO_RUN);
        return RunSelector.resolve(spec, ids, given, "the database",
                id != null ? "positional parameter 'ID'" : "option '--run'");
    }
}

package dev.panoptes.cli;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.report.RunDataLoader;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;

import java.util.List;

/**
 * A command about one stored run, named by its id or a prefix of it ({@link RunSelector}) as its
 * parameter: {@code runs show} and {@code runs delete}. {@code --run} of the shared
 * {@link DatabaseOptions} means nothing here, and is taken off the command ({@link #withoutRunOption}).
 * The command's thread only.
 */
abstract class StoredRunCommand extends StoredRunsCommand {
    @Parameters(index = "0", paramLabel = "ID",
            description = "The run: its id (in the coordinator's summary and in 'runs') or the id's first 8 or more"
                    + " characters.")
    String id;

    /** The command without {@code --run}, which the parameter replaces. */
    static CommandLine withoutRunOption(CommandLine command) {
        CommandSpec spec = command.getCommandSpec();
        spec.remove(spec.findOption("--run"));
        return command;
    }

    /**
     * The whole id of the run named.
     *
     * @throws ParameterException when the database holds no such run (or several start with the prefix)
     */
    String runId(JdbcResultStore store) {
        List<String> ids = RunDataLoader.runIds(store);
        ids.remove(RunDataLoader.NO_RUN);
        return RunSelector.resolve(spec, ids, id, "the database", "positional parameter 'ID'");
    }
}

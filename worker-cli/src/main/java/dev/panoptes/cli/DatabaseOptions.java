package dev.panoptes.cli;

import dev.panoptes.coordinator.DatabaseTarget;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.nio.file.Path;
import java.util.Map;

/**
 * {@code --db}, {@code --db-password-file} and {@code --run} of the commands that read what a
 * coordinator wrote ({@code results}, {@code report}, {@code rescore}): a SQLite file or a
 * PostgreSQL database, and every run in it or the one named (by its id or a prefix of it, see
 * {@link RunSelector}).
 */
final class DatabaseOptions {
    @Option(names = "--db", order = 10, paramLabel = "FILE|URL", defaultValue = "panoptes.db",
            description = "The result database a coordinator wrote: a SQLite file, or"
                    + " postgresql://[user@]host[:port]/dbname[?params]. Default: ${DEFAULT-VALUE}.")
    String db;

    @Option(names = "--db-password-file", order = 11, paramLabel = "FILE",
            description = "A file whose first line is the PostgreSQL password. Default: the "
                    + DatabaseTarget.PASSWORD_ENV + " or " + DatabaseTarget.PG_PASSWORD_ENV + " environment"
                    + " variable. Never printed.")
    Path passwordFile;

    @Option(names = "--run", order = 15, paramLabel = "ID",
            description = "Only this run: its id (in the coordinator's summary) or the id's first 8 or more"
                    + " characters. Default: every run.")
    String run;

    /**
     * The database to read, which must exist (opening a missing SQLite file would create an empty one).
     *
     * @throws ParameterException when --db is invalid, or a SQLite file that does not exist
     */
    DatabaseTarget existing(CommandSpec spec) {
        return existing(spec, System.getenv());
    }

    DatabaseTarget existing(CommandSpec spec, Map<String, String> env) {
        DatabaseTarget target = CoordinatorCommand.database(spec, db, passwordFile, env);
        if (target.missing()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--db': no such file: " + db
                    + " (a coordinator creates it; see 'coordinator --help')");
        }
        return target;
    }
}

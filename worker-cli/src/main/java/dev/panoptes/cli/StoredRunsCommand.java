package dev.panoptes.cli;

import dev.panoptes.coordinator.DatabaseTarget;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What the commands that read the runs of a result database share ({@code results}, {@code report},
 * {@code rescore}): their spec, {@code -v}/{@code --log-level} and {@code --db}/{@code --run}, which
 * picocli fills in on the subclass as on any command. Each starts its {@code call()} with
 * {@link #existingDatabase()}; the command's thread only.
 */
abstract class StoredRunsCommand {
    @Spec
    CommandSpec spec;

    @Mixin
    VerboseMixin verbose;

    @Mixin
    DatabaseOptions database;

    /**
     * Applies the log level asked for and returns the database {@code --db} names.
     *
     * @throws picocli.CommandLine.ParameterException when there is no such database
     */
    DatabaseTarget existingDatabase() {
        verbose.apply();
        return database.existing(spec);
    }
}

package dev.panoptes.cli;

import dev.panoptes.control.suite.SuiteSubset;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --limit}, {@code --sample-id}, {@code --shuffle} and {@code --dry-run}, as every command that
 * runs a suite takes them: which vignettes to ask ({@link #subset}, a {@link SuiteSubset}, part of
 * the run's identity), and whether to print the plan instead of running it. Filled in by picocli;
 * read on the command's thread.
 */
final class SubsetOptions {
    @Option(names = "--limit", order = 32, paramLabel = "N",
            description = "Ask only the first N vignettes (after --sample-id and --shuffle). A subset is a run of"
                    + " its own: it never merges with the whole suite's run.")
    Integer limit;

    @Option(names = "--sample-id", order = 33, paramLabel = "ID[,ID...]|@FILE", split = ",", hideParamSyntax = true,
            description = "Ask only these vignettes, by id; repeat or separate with commas. @FILE reads the ids"
                    + " from a file, one per line (blank lines and lines starting with # are skipped). An id the"
                    + " suite lacks is an error that names it.")
    List<String> sampleIds = new ArrayList<>();

    @Option(names = "--shuffle", order = 34, paramLabel = "SEED",
            description = "Ask the vignettes in an order drawn from SEED: the same seed gives the same order on any"
                    + " machine. With --limit, a deterministic random subset.")
    Long shuffle;

    @Option(names = "--dry-run", order = 35,
            description = "Print the plan (run id, vignettes, models, epochs, jobs) and the first requests exactly"
                    + " as a worker would send them (messages with system prompt and few-shot turns, model,"
                    + " sampling parameters), then exit 0: no model is called, no port opened, nothing stored.")
    boolean dryRun;

    /**
     * The subset these options ask for, {@link SuiteSubset#ALL} when none is given; id files are read
     * here.
     *
     * @throws ParameterException when --limit is below 1, or an id file is missing, unreadable or holds
     *                            no id (exit 2, naming the option)
     */
    SuiteSubset subset(CommandSpec spec) {
        if (limit != null && limit < 1) {
            throw CliErrors.invalid(spec, "--limit", "must be at least 1, got " + limit);
        }
        List<String> ids = new ArrayList<>();
        for (String value : sampleIds) {
            String id = value.strip();
            if (id.startsWith("@")) {
                ids.addAll(readIds(spec, Path.of(id.substring(1))));
            } else if (id.isEmpty()) {
                throw CliErrors.invalid(spec, "--sample-id", "an empty id in '" + String.join(",", sampleIds) + "'");
            } else {
                ids.add(id);
            }
        }
        return new SuiteSubset(ids, shuffle, limit);
    }

    private static List<String> readIds(CommandSpec spec, Path file) {
        if (!Files.isRegularFile(file)) {
            throw CliErrors.invalid(spec, "--sample-id", "no such file: " + file);
        }
        List<String> ids = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String id = line.strip();
                if (!id.isEmpty() && !id.startsWith("#")) {
                    ids.add(id);
                }
            }
        } catch (IOException e) {
            throw CliErrors.invalid(spec, "--sample-id", "cannot read " + file + ": " + e.getMessage());
        }
        if (ids.isEmpty()) {
            throw CliErrors.invalid(spec, "--sample-id", file + " holds no ids; put one vignette id per line");
        }
        return ids;
    }
}

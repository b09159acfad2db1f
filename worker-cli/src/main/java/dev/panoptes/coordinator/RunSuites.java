package dev.panoptes.coordinator;

import dev.panoptes.control.ChatMessage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.suite.FewShotReader;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteReader;
import dev.panoptes.control.suite.SuiteSubset;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A run's suite as the coordinator sends it: read (JSONL or CSV), every vignette's own scorer
 * checked before anything runs, and the few-shot examples put in front of every prompt.
 */
final class RunSuites {
    private RunSuites() {
    }

    /**
     * The suite these settings run: the lm-eval task's vignettes when they name a task file (read
     * and checked when the command line was), else the suite file with its few-shot examples.
     */
    static Suite load(CoordinatorSettings settings) throws IOException, SuiteFormatException {
        if (settings.task() != null) {
            return settings.task().suite();
        }
        return load(settings.suite(), settings.fewShot());
    }

    /**
     * @param fewShot a JSONL file of examples, or null
     * @throws SuiteFormatException when the suite or the examples have problems, or a vignette
     *                              names a scorer that does not exist (all of them listed)
     * @throws IOException          when a file cannot be read
     */
    static Suite load(Path suiteFile, Path fewShot) throws IOException, SuiteFormatException {
        Suite suite = new SuiteReader().read(suiteFile);
        List<String> problems = new ArrayList<>();
        for (Vignette v : suite.vignettes()) {
            if (v.scorer() != null) {
                try {
                    RunScoring.check(v.scorer());
                } catch (IllegalArgumentException e) {
                    problems.add("vignette '" + v.id() + "': " + e.getMessage());
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(suiteFile.toString(), problems);
        }
        if (fewShot == null) {
            return suite;
        }
        List<ChatMessage> shots = new FewShotReader().read(fewShot);
        List<Vignette> withShots = new ArrayList<>(suite.vignettes().size());
        for (Vignette v : suite.vignettes()) {
            try {
                withShots.add(v.withTurnsBefore(shots));
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(fewShot.toString(), problems.subList(0, Math.min(problems.size(), 10)));
        }
        return suite.withVignettes(withShots, suite.lines());
    }

    /**
     * The SHA-256 of the few-shot file's content (hex), or null when there is none: other examples
     * make other answers, so they make another run (see {@link RunManifest}).
     */
    static String fewShotSha256(Path fewShot) throws IOException {
        if (fewShot == null) {
            return null;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(fewShot));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** This Panoptes's version, as run manifests record it: the jar's, or "development build". */
    static String toolVersion() {
        String version = RunSuites.class.getPackage().getImplementationVersion();
        return version == null ? "development build" : version;
    }

    /**
     * The manifest of the run these settings ask for, of the suite they loaded with {@code subset}
     * applied (the subset is part of the run's identity), with the {@code --group-by} key it is
     * broken down by (not part of it).
     */
    static RunManifest manifest(CoordinatorSettings settings, Suite suite, SuiteSubset subset) throws IOException {
        return RunManifest.of(toolVersion(), settings.suite().toString(), suite, settings.models(),
                settings.params(), settings.epochs(), settings.fewShot() == null ? null : settings.fewShot().toString(),
                fewShotSha256(settings.fewShot()), settings.jobSize(), settings.label(), subset)
                .withGroupBy(settings.groupBy());
    }
}

package dev.panoptes.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bash .ci/test}, the README's test command (and all that {@code .ci/run} runs): on a machine
 * that has every package the tests need it installs nothing, starts a throwaway PostgreSQL cluster
 * and runs {@code mvn -B verify} with it; on one that lacks a package it installs that one only.
 * The script runs as written, with fake {@code mvn}, {@code apt-get} and {@code sudo} first on the
 * PATH, which record how they were called: nothing is installed and no build runs, but the
 * PostgreSQL cluster is real.
 */
class CiTestScriptTest {
    private static final Path REPOSITORY = Path.of("..").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void onAMachineThatHasEverythingItInstallsNothingAndRunsMavenVerifyAgainstAFreshPostgres() throws Exception {
        Path fakes = fakes();
        Result result = run(fakes + ":" + System.getenv("PATH"), null, "-Dextra=1");

        assertThat(result.exit).as(".ci/test: %s", result.stderr).isZero();
        List<String> calls = calls();
        assertThat(calls).as("what .ci/test ran").noneMatch(c -> c.startsWith("apt-get") || c.startsWith("sudo"));
        assertThat(calls).anyMatch(c -> c.equals("mvn -B verify -Dextra=1"));
        String postgres = calls.stream().filter(c -> c.startsWith("postgres ")).findFirst().orElseThrow();
        assertThat(postgres).matches("postgres --db postgresql://panoptes@127\\.0\\.0\\.1:\\d+/postgres"
                + " --db-password-file (\\S+)/password present");
        Path cluster = Path.of(postgres.replaceAll(".* --db-password-file (\\S+)/password present", "$1"));
        assertThat(cluster).as("the throwaway cluster is removed when the script ends").doesNotExist();
    }

    @Test
    void installsOnlyTheMissingPackageAndKeepsAPostgresItIsGiven() throws Exception {
        Path fakes = fakes();
        Path bin = binWithout("chromium");
        Result result = run(fakes + ":" + bin + ":/usr/sbin", "--db postgresql://given", "");

        assertThat(result.exit).as(".ci/test: %s", result.stderr).isZero();
        List<String> calls = calls().stream().map(c -> c.replaceFirst("^sudo ", "")).toList();
        assertThat(calls).as("what .ci/test ran").containsSubsequence(
                "apt-get update -qq", "apt-get install -y -qq chromium", "mvn -B verify");
        assertThat(calls).filteredOn(c -> c.startsWith("apt-get install")).hasSize(1);
        assertThat(calls).contains("postgres --db postgresql://given");
        assertThat(result.stderr).contains("installing what the tests need: chromium");
    }

    @Test
    void withoutMavenItStopsNamingTheJdkAndMaven() throws Exception {
        Path bin = binWithout("mvn");
        Result result = run(bin + ":/usr/sbin", null, "");

        assertThat(result.exit).isEqualTo(2);
        assertThat(result.stderr).contains("no 'mvn' on the PATH").contains("JDK 17 and Maven");
    }

    /** mvn, apt-get and sudo that append how they were called to calls.log; mvn also its database. */
    private Path fakes() throws IOException {
        Path fakes = Files.createDirectories(dir.resolve("fakes"));
        Path log = dir.resolve("calls.log");
        script(fakes.resolve("mvn"), "echo \"mvn $*\" >> '" + log + "'\n"
                + "f=${PANOPTES_TEST_POSTGRES##* }\n"
                + "if [ -f \"$f\" ]; then state=' present'; else state=''; fi\n"
                + "echo \"postgres $PANOPTES_TEST_POSTGRES$state\" >> '" + log + "'\n");
        script(fakes.resolve("apt-get"), "echo \"apt-get $*\" >> '" + log + "'\n");
        script(fakes.resolve("sudo"), "echo \"sudo $*\" >> '" + log + "'\nexec \"$@\"\n");
        return fakes;
    }

    /** A folder of links to everything in /usr/bin but {@code left}: a PATH that lacks it. */
    private Path binWithout(String left) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        try (Stream<Path> tools = Files.list(Path.of("/usr/bin"))) {
            for (Path tool : (Iterable<Path>) tools::iterator) {
                if (!tool.getFileName().toString().equals(left)) {
                    Files.createSymbolicLink(bin.resolve(tool.getFileName()), tool);
                }
            }
        }
        return bin;
    }

    private static void script(Path file, String body) throws IOException {
        Files.writeString(file, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private List<String> calls() throws IOException {
        Path log = dir.resolve("calls.log");
        return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    private Result run(String path, String givenPostgres, String mavenArgument) throws Exception {
        ProcessBuilder builder = mavenArgument.isEmpty()
                ? new ProcessBuilder("bash", REPOSITORY.resolve(".ci/test").toString())
                : new ProcessBuilder("bash", REPOSITORY.resolve(".ci/test").toString(), mavenArgument);
        builder.environment().put("PATH", path);
        builder.environment().remove("PANOPTES_TEST_POSTGRES");
        if (givenPostgres != null) {
            builder.environment().put("PANOPTES_TEST_POSTGRES", givenPostgres);
        }
        Path stderr = dir.resolve("stderr");
        Process process = builder.redirectOutput(dir.resolve("stdout").toFile()).redirectError(stderr.toFile()).start();
        assertThat(process.waitFor(50, TimeUnit.SECONDS)).as(".ci/test ended within 50 s").isTrue();
        return new Result(process.exitValue(), Files.readString(stderr, StandardCharsets.UTF_8));
    }

    private record Result(int exit, String stderr) {
    }
}

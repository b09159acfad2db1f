package dev.panoptes.bench;

import dev.panoptes.bench.fleet.FleetBench;
import dev.panoptes.bench.harness.BenchContext;
import dev.panoptes.bench.harness.Report;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** {@code fleet}: measurement 15 (issue 32), the real coordinator against a simulated fleet ({@link FleetBench}). */
@Command(name = "fleet", mixinStandardHelpOptions = true,
        description = "15. A simulated fleet: the real coordinator command (SQLite or PostgreSQL) against 1,000 fake"
                + " worker connections of capacity 64 in one JVM; the coordinator's CPU per stored answer over the"
                + " whole run and in the steady state (per thread), answers/s, context switches, heap, first dispatch.")
final class FleetCommand extends BenchCommand {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = {"--worker-jar", "--builds"}, split = ",", paramLabel = "JAR|DIR", description = "The product"
            + " binaries to measure, alternating within each round (a worker.jar, or a source tree whose"
            + " worker-cli/target/worker.jar is built; repeatable or comma-separated; default: ${DEFAULT-VALUE}).",
            defaultValue = "worker-cli/target/worker.jar")
    List<Path> builds;

    @Option(names = "--vignettes", description = "Vignettes in the generated suite (default: ${DEFAULT-VALUE}).",
            defaultValue = "1000000")
    int vignettes;

    @Option(names = "--connections", description = "Fake worker connections (default: ${DEFAULT-VALUE}).",
            defaultValue = "1000")
    int connections;

    @Option(names = "--capacity", description = "Jobs in flight per connection (default: ${DEFAULT-VALUE}).",
            defaultValue = "64")
    int capacity;

    @Option(names = "--latency-ms", split = ",", description = "How long the fleet takes to answer a job, one run"
            + " per value (0: at once; default: ${DEFAULT-VALUE}).", defaultValue = "0")
    List<Long> latenciesMs;

    @Option(names = "--job-size", split = ",", description = "Vignettes per job, one run per value"
            + " (default: ${DEFAULT-VALUE}).", defaultValue = "1,8")
    List<Integer> jobSizes;

    @Option(names = "--db", paramLabel = "sqlite|postgres|URL", description = "The result database: sqlite (a"
            + " fresh temporary file per run), postgresql://USER@HOST:PORT/DB (a fresh database on that server per"
            + " run, dropped after), or postgres: the server PANOPTES_TEST_POSTGRES names (default: ${DEFAULT-VALUE}).",
            defaultValue = "sqlite")
    String db;

    @Option(names = "--db-password-file", paramLabel = "FILE", description = "The PostgreSQL password, for a"
            + " postgresql:// --db.")
    Path dbPasswordFile;

    @Option(names = "--fleet-threads", description = "The fake fleet's I/O threads (default: ${DEFAULT-VALUE}).",
            defaultValue = "1")
    int fleetThreads;

    @Option(names = "--poll-ms", description = "How often the store and /proc are read (default: ${DEFAULT-VALUE}).",
            defaultValue = "100")
    long pollMs;

    @Option(names = "--async-profiler", paramLabel = "LIB", description = "Profile the coordinator's steady"
            + " state in the last round of each build with this async-profiler agent (libasyncProfiler.so, loaded"
            + " with jcmd), and print its hottest frames per thread.")
    Path asprof;

    @Option(names = "--async-profiler-event", paramLabel = "cpu|alloc", description = "What --async-profiler"
            + " samples: cpu (1 ms of CPU) or alloc (every 512 KB allocated, reported in bytes, per answer too;"
            + " default: ${DEFAULT-VALUE}).", defaultValue = "cpu")
    String asprofEvent;

    FleetCommand() {
        super(3);
    }

    @Override
    void validate() {
        if (vignettes < 1 || connections < 1 || capacity < 1 || fleetThreads < 1 || pollMs < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--vignettes, --connections, --capacity,"
                    + " --fleet-threads and --poll-ms must be at least 1");
        }
        if (jobSizes.stream().anyMatch(j -> j < 1) || latenciesMs.stream().anyMatch(l -> l < 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--job-size must be at least 1 and"
                    + " --latency-ms at least 0, got " + jobSizes + " and " + latenciesMs);
        }
        if (!asprofEvent.equals("cpu") && !asprofEvent.equals("alloc")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--async-profiler-event must be cpu or"
                    + " alloc, got " + asprofEvent);
        }
        if (db.equals("postgres")) {
            String env = System.getenv("PANOPTES_TEST_POSTGRES");
            if (env == null || env.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--db postgres reads"
                        + " PANOPTES_TEST_POSTGRES, which is not set; start a server with `bash .ci/postgres start DIR`"
                        + " and export the line it prints, or give --db postgresql://...");
            }
            // The line .ci/postgres prints: --db URL --db-password-file FILE
            String[] words = env.trim().split("\\s+");
            for (int i = 0; i + 1 < words.length; i++) {
                if (words[i].equals("--db")) {
                    db = words[i + 1];
                } else if (words[i].equals("--db-password-file")) {
                    dbPasswordFile = Path.of(words[i + 1]);
                }
            }
        }
        if (!db.equals("sqlite") && !db.startsWith("postgresql://")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--db must be sqlite, postgres or a"
                    + " postgresql:// URL, got " + db);
        }
        List<Path> jars = new ArrayList<>();
        for (Path b : builds) {
            Path jar = Files.isDirectory(b) ? b.resolve("worker-cli/target/worker.jar") : b;
            if (!Files.isRegularFile(jar)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "no worker.jar at " + jar
                        + ": build it first (mvn -B -q -o -pl worker-cli -am package -DskipTests)");
            }
            jars.add(jar);
        }
        builds = jars;
    }

    @Override
    int measure(BenchContext ctx, Report report) throws Exception {
        return FleetBench.run(ctx, report, new FleetBench.Options(builds, runs(), vignettes, connections, capacity,
                latenciesMs, jobSizes, db, dbPasswordFile, fleetThreads, pollMs, asprof, asprofEvent));
    }
}

package dev.panoptes.bench;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/** Where the product binary is, for the measurements that run the real coordinator command; a picocli mixin. */
final class WorkerJarOption {
    @Option(names = "--worker-jar", description = "The product binary (default: ${DEFAULT-VALUE}).",
            defaultValue = "worker-cli/target/worker.jar")
    Path workerJar;
}

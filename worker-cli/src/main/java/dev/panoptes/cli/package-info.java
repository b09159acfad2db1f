/**
 * The command line of {@code worker.jar}: {@link dev.panoptes.cli.WorkerMain} and its subcommands, the converters
 * and mixins they share; the only package that imports picocli, and the only one that turns options into the
 * settings of the worker, the coordinator application, the demo and the report.
 */
package dev.panoptes.cli;

/**
 * Reports on finished runs: the data read from the result database ({@link
 * dev.panoptes.worker.report.RunData} and its rows), the one place that computes every figure
 * ({@link dev.panoptes.worker.report.RunStats}), the one way to print them
 * ({@link dev.panoptes.worker.report.Figures}), and the writers: spreadsheet-safe CSV
 * ({@link dev.panoptes.worker.report.CsvWriter}) and a self-contained HTML page
 * ({@link dev.panoptes.worker.report.HtmlReport}).
 */
package dev.panoptes.worker.report;

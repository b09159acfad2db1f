/**
 * Reports on finished runs: the data read from the result database ({@link
 * dev.panoptes.report.RunData} and its rows), the one place that computes every figure
 * ({@link dev.panoptes.report.RunStats}), the one way to print them
 * ({@link dev.panoptes.report.Figures}), and the writers: spreadsheet-safe CSV
 * ({@link dev.panoptes.report.CsvWriter}), a self-contained HTML page
 * ({@link dev.panoptes.report.HtmlReport}), and Inspect AI eval logs
 * ({@link dev.panoptes.report.InspectLog}) for the tools eval engineers already view results in.
 */
package dev.panoptes.report;

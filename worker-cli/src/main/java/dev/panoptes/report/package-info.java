/**
 * Reports on finished runs: the data read from the result database ({@link
 * dev.panoptes.report.RunData} and its rows), the one place that computes every figure
 * ({@link dev.panoptes.report.RunStats}), the one way to print them
 * ({@link dev.panoptes.report.Figures}), and the writers: spreadsheet-safe CSV
 * ({@link dev.panoptes.report.CsvWriter}), a self-contained HTML page
 * ({@link dev.panoptes.report.HtmlReport}), and the formats of the tools eval engineers already
 * view results in: Inspect AI eval logs ({@link dev.panoptes.report.InspectLog}) and
 * lm-evaluation-harness's results and samples files ({@link dev.panoptes.report.LmEvalExport}).
 */
package dev.panoptes.report;

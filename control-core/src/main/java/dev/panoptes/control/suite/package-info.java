/**
 * From a suite file to the jobs of a run: reading suites (JSONL or CSV) and few-shot examples with
 * every problem reported by line, cutting them into jobs whose ids are the same for the same
 * content ({@link dev.panoptes.control.suite.JobPlan}), the run's identity ({@link
 * dev.panoptes.control.suite.RunManifest}), the subset of a suite a run asks ({@link
 * dev.panoptes.control.suite.SuiteSubset}), and the jobs too big to send ({@link
 * dev.panoptes.control.suite.UnsendableJobs}). Readers are stateless and records immutable: any
 * thread.
 */
package dev.panoptes.control.suite;

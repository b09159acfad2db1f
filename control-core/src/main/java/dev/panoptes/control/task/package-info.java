/**
 * lm-evaluation-harness task files ({@code lm_eval} YAML) read as Panoptes suites: the YAML with
 * its includes, the task's data from local JSON, JSONL or CSV files, its Jinja templates rendered
 * with Jinjava, few-shot examples drawn as lm-eval's default sampler draws them, and everything the
 * file uses that Panoptes cannot run refused before anything runs, with its file and line. The
 * entry point is {@link dev.panoptes.control.task.LmEvalTaskReader}; readers are stateless: any
 * thread.
 */
package dev.panoptes.control.task;

/**
 * Grading answers: scorers that compare an answer with the expected one without calling a model
 * ({@link dev.panoptes.control.score.Scorer}, built from their spec text by {@link
 * dev.panoptes.control.score.Scorers}), the choice of scorer per vignette ({@link
 * dev.panoptes.control.score.RunScoring}), and the prompt and verdict of model-graded scoring
 * ({@link dev.panoptes.control.score.JudgeRubric}), whose model call belongs to the caller.
 *
 * <p><b>Threads.</b> Everything here is stateless or immutable: any thread.
 */
package dev.panoptes.control.score;

package dev.panoptes.control.store;

/**
 * What a stored record's job said about it: where it belongs and what was asked.
 *
 * @param runId        the run, or null for records stored without one
 * @param model        the model the run asked for (not necessarily the name the API reported,
 *                     which the record itself keeps), or null when the run named none
 * @param epoch        which repetition of the suite, from 0
 * @param prompt       the prompt as people read it (a chat as {@code role: content} lines), or null
 * @param expected     the reference answer, or null
 * @param metadataJson the vignette's metadata as a JSON object, or null when it had none
 */
public record RecordContext(String runId, String model, int epoch, String prompt, String expected,
                            String metadataJson) {
    /** The context of a record stored without a job (only its id and answer are known). */
    public static final RecordContext NONE = new RecordContext(null, null, 0, null, null, null);
}

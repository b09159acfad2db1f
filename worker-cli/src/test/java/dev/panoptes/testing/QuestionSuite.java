package dev.panoptes.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The suite many coordinator tests run: vignettes q0, q1, ... asking "question i", expecting "Answer i". */
public final class QuestionSuite {
    private QuestionSuite() {
    }

    /** Writes {@code vignettes} of them to {@code dir/suite.jsonl} and returns its path. */
    public static Path write(Path dir, int vignettes) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < vignettes; i++) {
            sb.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"question ").append(i)
                    .append("\",\"expected\":\"Answer ").append(i).append("\"}\n");
        }
        return Files.writeString(dir.resolve("suite.jsonl"), sb.toString());
    }
}

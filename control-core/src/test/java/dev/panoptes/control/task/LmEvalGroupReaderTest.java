package dev.panoptes.control.task;

import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An lm-eval group file read as one run: its tasks found by name or file, their vignettes named
 * by task and tagged with it, its aggregates, and an identity that every task's identity is part of.
 */
class LmEvalGroupReaderTest {
    private static final Path EVALS = Path.of("..", "evals").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void theShippedGroupHoldsBothTasksVignettesTaggedWithTheirTask() throws Exception {
        Path file = EVALS.resolve("basic-skills-group.yaml");
        assertThat(LmEvalGroupReader.isGroupFile(file)).isTrue();
        assertThat(LmEvalGroupReader.isGroupFile(EVALS.resolve("arithmetic-task.yaml"))).isFalse();

        LmEvalGroupReader.Group group = new LmEvalGroupReader().read(file);

        assertThat(group.tasks()).extracting(LoadedTask::name).containsExactly("arithmetic_mc", "units_mc");
        assertThat(group.aggregates()).containsExactly(new LmEvalGroupReader.Aggregate("acc", true),
                new LmEvalGroupReader.Aggregate("acc_norm", false));
        List<Vignette> vs = group.task().suite().vignettes();
        assertThat(vs).hasSize(64);
        assertThat(group.task().name()).isEqualTo("basic_skills");
        assertThat(group.task().scorer()).isEqualTo("acc");
        assertThat(vs.get(0).id()).isEqualTo("arithmetic_mc/0");
        assertThat(vs.get(0).metadata()).containsEntry(LmEvalGroupReader.TASK_KEY, "arithmetic_mc");
        assertThat(vs.get(40).id()).isEqualTo("units_mc/0");
        assertThat(vs.get(40).prompt()).isEqualTo(group.tasks().get(1).suite().vignettes().get(0).prompt());
        assertThat(vs.get(40).choices()).isEqualTo(group.tasks().get(1).suite().vignettes().get(0).choices());
    }

    @Test
    void theGroupsIdentityChangesWithAnyTasksDataOrTheGroupItself() throws Exception {
        for (String f : List.of("arithmetic-task.yaml", "arithmetic-task.jsonl", "arithmetic-task-train.jsonl",
                "units-task.yaml", "units-task.jsonl", "basic-skills-group.yaml")) {
            Files.copy(EVALS.resolve(f), dir.resolve(f));
        }
        Path group = dir.resolve("basic-skills-group.yaml");
        String first = new LmEvalGroupReader().read(group).task().suite().sha256();
        assertThat(new LmEvalGroupReader().read(group).task().suite().sha256()).isEqualTo(first);

        Path units = dir.resolve("units-task.jsonl");
        List<String> lines = Files.readAllLines(units);
        Files.write(units, lines.subList(0, lines.size() - 1));
        String lessData = new LmEvalGroupReader().read(group).task().suite().sha256();
        assertThat(lessData).isNotEqualTo(first);

        Files.writeString(group, Files.readString(group).replace("weight_by_size: false", "weight_by_size: true"));
        assertThat(new LmEvalGroupReader().read(group).task().suite().sha256()).isNotEqualTo(lessData);
    }
}

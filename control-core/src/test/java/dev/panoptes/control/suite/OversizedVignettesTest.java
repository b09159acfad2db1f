package dev.panoptes.control.suite;

import dev.panoptes.control.Job;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** Big vignettes go alone, are named with their line when they cannot be sent, and bad lines read plainly. */
class OversizedVignettesTest {
    @TempDir
    Path dir;

    @Test
    void aVignettePastTheJobBoundGoesAloneAndTheOthersKeepTheirJobSize() {
        List<Vignette> vignettes = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            vignettes.add(new Vignette("v" + i, i == 3 ? "x".repeat(5 << 20) : "prompt " + i));
        }
        Suite suite = new Suite("s", vignettes, "ab".repeat(32));

        JobPlan plan = JobPlan.of(suite, SpecParams.NONE, 4, "");

        assertThat(plan.jobs()).extracting(j -> j.spec().vignettes().stream().map(Vignette::id).toList())
                .containsExactly(List.of("v0", "v1", "v2"), List.of("v3"), List.of("v4", "v5", "v6", "v7"),
                        List.of("v8", "v9"));
        // Small suites are cut by the job size alone, as before.
        assertThat(JobPlan.of(new Suite("s", vignettes.subList(4, 10), "ab".repeat(32)), SpecParams.NONE, 4, "")
                .jobs()).extracting(Job::size).containsExactly(4, 2);
    }

    @Test
    void aJobTooBigForTheFrameLimitIsNamedWithItsLineAndWhatToDo() throws Exception {
        Path file = dir.resolve("s.jsonl");
        Files.writeString(file, "{\"id\":\"a\",\"prompt\":\"hi\"}\n\n{\"id\":\"big\",\"prompt\":\"" + "y".repeat(200_000)
                + "\"}\n{\"id\":\"c\",\"prompt\":\"yo\"}\n");
        Suite suite = new SuiteReader().read(file);
        JobPlan plan = JobPlan.of(suite, SpecParams.NONE, 8, "");

        List<UnsendableJobs.Unsendable> unsendable = UnsendableJobs.of(plan, suite, 128 * 1024);

        // Under the job bound (4 MiB), so it shares its job: below that limit the whole job cannot go.
        assertThat(unsendable).singleElement().satisfies(u -> {
            assertThat(u.job().spec().vignettes()).extracting(Vignette::id).containsExactly("a", "big", "c");
            assertThat(u.problem()).startsWith("line 1: job ").contains("(3 vignettes, to line 4) takes " + u.bytes()
                    + " bytes to send, more than the frame limit of 131072 bytes; it is not sent")
                    .contains("raise --max-frame-bytes on both sides (the coordinator and every worker) to at least "
                            + u.bytes()).endsWith("or lower --job-size");
        });
        // A vignette past the bound goes alone, and is named alone with its line.
        Files.writeString(file, "{\"id\":\"a\",\"prompt\":\"hi\"}\n\n{\"id\":\"big\",\"prompt\":\""
                + "y".repeat(5 << 20) + "\"}\n{\"id\":\"c\",\"prompt\":\"yo\"}\n");
        Suite alone = new SuiteReader().read(file);
        assertThat(UnsendableJobs.of(JobPlan.of(alone, SpecParams.NONE, 8, ""), alone, 4 << 20)).singleElement()
                .satisfies(u -> assertThat(u.problem()).startsWith("line 3: job ")
                        .contains("vignette 'big' takes " + u.bytes() + " bytes to send").endsWith("or shorten the"
                                + " vignette"));
        assertThat(UnsendableJobs.of(plan, suite, 16 << 20)).isEmpty();
    }

    @Test
    void aPromptLongerThanJacksonsDefaultCapReadsAndMalformedLinesSayWhatIsWrongPlainly() throws Exception {
        Path big = dir.resolve("big.jsonl");
        Files.writeString(big, "{\"id\":\"long\",\"prompt\":\"" + "z".repeat(20_100_000) + "\"}\n");
        assertThat(new SuiteReader().read(big).vignettes().get(0).prompt()).hasSize(20_100_000);

        Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"id\":\"a\",\"prompt\":\"x\"\n{\"id\":\"b\",\"prompt\":'x'}\n{\"id\":\"c\",\"prompt\":\"x\",}\n");
        Throwable e = catchThrowable(() -> new SuiteReader().read(bad));
        assertThat(e).isInstanceOf(SuiteFormatException.class);
        assertThat(e.getMessage()).contains(":1: not valid JSON: the line ends before its object is closed: a '}' is"
                        + " missing")
                .contains(":2: not valid JSON: at column 20: expected a value").contains("strings take double quotes")
                .contains(":3: not valid JSON: at column 24: expected a field name in double quotes, found '}' (a"
                        + " comma before '}'?)")
                .doesNotContain("REDACTED").doesNotContain("StreamReadFeature").doesNotContain("code 39");
    }
}

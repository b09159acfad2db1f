package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code coordinator --limit/--sample-id/--shuffle/--dry-run} as a user types them. */
class SubsetOptionsTest {
    private static final Pattern RUN_ID = Pattern.compile("run:\\s+([0-9a-f]{16})");

    @TempDir
    Path dir;

    private StringWriter out = new StringWriter();
    private StringWriter err = new StringWriter();

    private Path suite() throws Exception {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            b.append("{\"id\":\"q").append(i).append("\",\"prompt\":\"").append(i).append("+1?\",\"expected\":\"")
                    .append(i + 1).append("\"}\n");
        }
        return Files.writeString(dir.resolve("s.jsonl"), b.toString());
    }

    private int execute(List<String> args) {
        out = new StringWriter();
        err = new StringWriter();
        return WorkerMain.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true),
                Map.of());
    }

    private List<String> coordinator(String... more) throws Exception {
        List<String> all = new java.util.ArrayList<>(List.of("coordinator", "--suite", suite().toString(),
                "--model", "m", "--listen", "127.0.0.1:0", "--db", dir.resolve("r.db").toString()));
        all.addAll(List.of(more));
        return all;
    }

    private String runId() {
        Matcher m = RUN_ID.matcher(out.toString());
        assertThat(m.find()).as("a run id in\n" + out).isTrue();
        return m.group(1);
    }

    @Test
    void aDryRunPrintsThePlanAndTheRequestsAsSentAndTouchesNothing() throws Exception {
        Path shots = Files.writeString(dir.resolve("shots.jsonl"), "{\"input\":\"9+1?\",\"answer\":\"10\"}\n");

        int exit = execute(coordinator("--system", "Answer with a number.", "--temperature", "0", "--seed", "5",
                "--few-shot", shots.toString(), "--limit", "2", "--shuffle", "7", "--dry-run"));

        assertThat(exit).as(err.toString()).isZero();
        String text = out.toString();
        assertThat(text).contains("no model is called")
                .contains("2 vignettes asked (subset: shuffled (seed 7), first 2)")
                .contains("models:    m").contains("epochs:    1").contains("jobs:      1 of up to 8 vignettes")
                .contains("The first 2 requests");
        // Seed 7 puts q1 and q5 first (SHA-256 of "7\nq1" and "7\nq5" rank lowest of the six).
        assertThat(text).contains("vignettes: q1, q5");
        String firstBody = text.substring(text.indexOf('{'), text.indexOf("\n}") + 2);
        JsonNode body = new ObjectMapper().readTree(firstBody);
        assertThat(body.get("model").asText()).isEqualTo("m");
        assertThat(body.get("temperature").asDouble()).isZero();
        assertThat(body.get("seed").asLong()).isEqualTo(5);
        assertThat(body.get("messages")).hasSize(4);
        assertThat(body.get("messages").get(0).get("role").asText()).isEqualTo("system");
        assertThat(body.get("messages").get(1).get("content").asText()).isEqualTo("9+1?");
        assertThat(body.get("messages").get(2).get("role").asText()).isEqualTo("assistant");
        assertThat(body.get("messages").get(3).get("content").asText()).isEqualTo("1+1?");
        assertThat(dir.resolve("r.db")).doesNotExist();
        assertThat(dir.resolve("r.db.lock")).doesNotExist();
    }

    @Test
    void theSubsetIsPartOfTheRunIdAndTheWholeSuiteKeepsItsOwn() throws Exception {
        execute(coordinator("--dry-run"));
        String whole = runId();
        execute(coordinator("--dry-run", "--limit", "3"));
        String limited = runId();
        execute(coordinator("--dry-run", "--limit", "3"));
        String again = runId();
        execute(coordinator("--dry-run", "--sample-id", "q3,q1"));
        String ids = runId();
        assertThat(out.toString()).contains("vignettes: q1, q3");
        Path file = Files.writeString(dir.resolve("ids.txt"), "# chosen\nq1\n\n q3 \n");
        execute(coordinator("--dry-run", "--sample-id", "@" + file));
        String fromFile = runId();

        assertThat(List.of(whole, limited, ids)).doesNotHaveDuplicates();
        assertThat(again).isEqualTo(limited);
        assertThat(fromFile).isEqualTo(ids);
    }

    @Test
    void badSubsetFlagsSayWhatIsWrongAndExitWith2() throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.txt"), "\n# none\n");
        assertThat(execute(coordinator("--limit", "-1", "--dry-run"))).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--limit': must be at least 1, got -1");
        assertThat(execute(coordinator("--sample-id", "@" + empty, "--dry-run"))).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--sample-id': " + empty
                + " holds no ids; put one vignette id per line");
        assertThat(execute(coordinator("--sample-id", "@" + dir.resolve("missing.txt")))).isEqualTo(2);
        assertThat(err.toString()).contains("no such file");
        assertThat(execute(coordinator("--sample-id", "q1,nope,q9", "--dry-run"))).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--sample-id': suite s has no vignette with the"
                + " ids nope, q9");
        assertThat(execute(coordinator("--shuffle", "x"))).isEqualTo(2);
        assertThat(err.toString()).contains("--shuffle");
        assertThat(dir.resolve("r.db")).doesNotExist();
    }

    @Test
    void aRealRunRefusesUnknownIdsBeforeAnythingIsStored() throws Exception {
        assertThat(execute(coordinator("--sample-id", "nope"))).isEqualTo(2);
        assertThat(err.toString()).contains("suite s has no vignette with the id nope");
        assertThat(dir.resolve("r.db")).doesNotExist();
    }
}

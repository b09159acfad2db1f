package dev.panoptes.worker;

import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoredRecord;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * End to end with real processes: {@code java -jar worker.jar demo} runs a coordinator, a stub
 * model API and four worker processes of the built jar over TCP (one with a wrong model API), and
 * kills one worker with SIGKILL mid-run. Every vignette must end stored exactly once, by the
 * healthy workers, and the redeliveries must show.
 */
@Timeout(120)
class DemoIT {
    private static final Path JAR = Path.of(System.getProperty("worker.jar", "target/worker.jar"));

    @TempDir
    Path dir;

    @Test
    void theDemoSurvivesAKilledWorkerAndStoresEveryVignetteExactlyOnce() throws Exception {
        Path db = dir.resolve("demo.db");
        Path output = dir.resolve("demo.out");
        Process demo = new ProcessBuilder(javaBin(), "-jar", JAR.toString(), "demo", "--db", db.toString())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        assertThat(demo.waitFor(100, TimeUnit.SECONDS)).as("the demo finished").isTrue();
        String printed = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(demo.exitValue()).as(printed).isZero();

        assertThat(printed).contains("killed demo-worker-1").contains("with SIGKILL")
                .contains("Run complete").contains("300 of 300 stored");
        Matcher redelivered = Pattern.compile("redelivered: (\\d+) jobs").matcher(printed);
        assertThat(redelivered.find()).as(printed).isTrue();
        assertThat(Integer.parseInt(redelivered.group(1))).as("jobs redelivered").isPositive();
        // The second act: a worker with a wrong --model-api loses no job and fails none.
        assertThat(printed).contains("demo-worker-misconfigured was started with a wrong --model-api")
                .contains("its model API answered 404").contains("75 of 75 complete, 0 failed");

        Suite suite;
        try (InputStream in = DemoCommand.class.getResourceAsStream(DemoCommand.SUITE_RESOURCE)) {
            suite = new SuiteReader().read(in, "demo", DemoCommand.SUITE_RESOURCE);
        }
        List<StoredRecord> records = new ArrayList<>();
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db)) {
            store.forEachRecord(records::add);
        }
        Set<String> vignettes = new HashSet<>();
        records.forEach(r -> vignettes.add(r.record().vignetteId()));
        assertThat(records).hasSize(suite.vignettes().size());
        assertThat(vignettes).hasSize(suite.vignettes().size());
        assertThat(records).allSatisfy(r -> {
            assertThat(r.workerId()).startsWith("demo-worker-").isNotEqualTo("demo-worker-misconfigured");
            assertThat(r.record().response()).isEqualTo(StubModelServer.answer(promptOf(suite, r)));
        });
    }

    private static String promptOf(Suite suite, StoredRecord r) {
        return suite.vignettes().stream().filter(v -> v.id().equals(r.record().vignetteId())).findFirst()
                .orElseThrow().prompt();
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}

package dev.panoptes.coordinator;

import dev.panoptes.cli.CoordinatorCommand;
import dev.panoptes.cli.WorkerMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --db}: a SQLite file or a PostgreSQL URL, and where a PostgreSQL password may come from. */
class DatabaseTargetTest {
    private static final String SECRET = "s3cret-Pa55";

    @TempDir
    Path dir;

    @Test
    void aPostgresUrlInEachSpellingBecomesAJdbcUrlAndAUser() {
        DatabaseTarget.Postgres full = (DatabaseTarget.Postgres) DatabaseTarget.parse(
                "postgresql://ci%40corp@db.example:6543/evals?sslmode=require");
        assertThat(full.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example:6543/evals?sslmode=require");
        assertThat(full.user()).isEqualTo("ci@corp");
        assertThat(full.password()).isNull();

        DatabaseTarget.Postgres bare = (DatabaseTarget.Postgres) DatabaseTarget.parse("postgres://db/evals");
        assertThat(bare.jdbcUrl()).isEqualTo("jdbc:postgresql://db/evals");
        assertThat(bare.user()).isNull();

        DatabaseTarget.Postgres jdbc = (DatabaseTarget.Postgres) DatabaseTarget.parse(
                "jdbc:postgresql://[::1]:5432/evals?user=ci");
        assertThat(jdbc.jdbcUrl()).isEqualTo("jdbc:postgresql://[::1]:5432/evals?user=ci");
        assertThat(jdbc.toString()).isEqualTo("postgresql://[::1]:5432/evals?user=ci");
    }

    @Test
    void anythingElseIsASqliteFileAndOtherJdbcUrlsAreRefused() {
        assertThat(DatabaseTarget.parse("math.db")).isEqualTo(new DatabaseTarget.Sqlite(Path.of("math.db")));
        assertThat(DatabaseTarget.parse("math.db").settingsPath()).isEqualTo(Path.of("math.db"));
        assertThatThrownBy(() -> DatabaseTarget.parse("jdbc:mysql://db/evals"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PostgreSQL URL");
        assertThatThrownBy(() -> DatabaseTarget.parse("postgresql://db"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("postgresql://[user@]host[:port]/dbname");
    }

    @Test
    void aPasswordOnTheCommandLineIsRefusedWithoutRepeatingIt() {
        for (String url : new String[] {"postgresql://ci:" + SECRET + "@db/evals",
            "postgresql://db/evals?user=ci&password=" + SECRET, "jdbc:postgresql://db/evals?PASSWORD=" + SECRET}) {
            assertThatThrownBy(() -> DatabaseTarget.parse(url)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("PANOPTES_DB_PASSWORD").hasMessageNotContaining(SECRET);
        }
    }

    @Test
    void thePasswordComesFromTheFileThenPanoptesDbPasswordThenPgpasswordAndIsNeverPrinted() throws IOException {
        Path file = Files.writeString(dir.resolve("pw"), "from-file\nignored\n");
        Map<String, String> env = Map.of("PANOPTES_DB_PASSWORD", "from-panoptes", "PGPASSWORD", "from-pg");
        assertThat(DatabaseTarget.password(file, env)).isEqualTo("from-file");
        assertThat(DatabaseTarget.password(null, env)).isEqualTo("from-panoptes");
        assertThat(DatabaseTarget.password(null, Map.of("PGPASSWORD", "from-pg"))).isEqualTo("from-pg");
        assertThat(DatabaseTarget.password(null, Map.of())).isNull();
        assertThatThrownBy(() -> DatabaseTarget.password(Files.writeString(dir.resolve("empty"), "\n"), env))
                .isInstanceOf(IOException.class).hasMessageContaining("is empty");

        DatabaseTarget.Postgres db = ((DatabaseTarget.Postgres) DatabaseTarget.parse("postgresql://ci@db/evals"))
                .withPassword(SECRET);
        assertThat(db.toString()).isEqualTo("postgresql://db/evals (user ci)").doesNotContain(SECRET);
        assertThat(db.settingsPath().toString()).doesNotContain(SECRET);
    }

    @Test
    void theCoordinatorTakesAPostgresDbWithItsPasswordFromTheEnvironment() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        CoordinatorCommand command = new CoordinatorCommand(Map.of("PGPASSWORD", SECRET));
        new CommandLine(command).parseArgs("--suite", suite.toString(), "--model", "m",
                "--db", "postgresql://ci@db.example/evals");

        CoordinatorSettings settings = command.settings();

        assertThat(settings.toString()).doesNotContain(SECRET);
        assertThat(settings.db().toString()).contains("db.example").contains("evals");
    }

    @Test
    void aPasswordFileIsRefusedForASqliteDbAndAPasswordInTheUrlFailsTheCommandLine() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        Path file = Files.writeString(dir.resolve("pw"), SECRET);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int sqlite = WorkerMain.run(new String[] {"coordinator", "--suite", suite.toString(), "--model", "m",
            "--db", dir.resolve("r.db").toString(), "--db-password-file", file.toString()},
                new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
        int inUrl = WorkerMain.run(new String[] {"results", "--db", "postgresql://ci:" + SECRET + "@db/evals"},
                new PrintWriter(out, true), new PrintWriter(err, true), Map.of());

        assertThat(sqlite).isEqualTo(2);
        assertThat(inUrl).isEqualTo(2);
        assertThat(err.toString()).contains("'--db-password-file': only for a PostgreSQL --db")
                .contains("a password does not belong on the command line").doesNotContain(SECRET);
        assertThat(out.toString()).doesNotContain(SECRET);
    }
}

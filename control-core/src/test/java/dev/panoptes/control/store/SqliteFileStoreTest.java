package dev.panoptes.control.store;

import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A test of the store on a SQLite file of its own, as the schema upgrade tests need: the file,
 * the store opened on it, and a plain JDBC connection to it (to build an old schema, or look
 * beneath the store).
 */
abstract class SqliteFileStoreTest {
    @TempDir
    Path dir;

    Path db() {
        return dir.resolve("r.db");
    }

    JdbcResultStore open() {
        return JdbcResultStore.openSqlite(db());
    }

    Connection plain() throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + db().toAbsolutePath());
    }

    /** Runs each statement on a plain connection to the file, outside the store. */
    void execute(String... statements) throws SQLException {
        try (Connection c = plain();
             Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }
}

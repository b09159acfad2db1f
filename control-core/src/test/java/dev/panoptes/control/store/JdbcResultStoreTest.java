package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JdbcResultStoreTest {
    @TempDir
    Path dir;

    @Test
    void aSecondRecordForAKeyIsADuplicateAndChangesNothing() {
        Job job = TestJobs.job("j", "a", "b");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            assertThat(store.record(TestJobs.echo(job), "w1")).isEqualTo(new ResultStore.Receipt(2, 0));
            JobOutcome again = new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "changed"),
                    new ResponseRecord("v1", "changed")));
            assertThat(store.record(again, "w2")).isEqualTo(new ResultStore.Receipt(0, 2));

            assertThat(store.recordCount()).isEqualTo(2);
            assertThat(store.duplicateCount()).isEqualTo(2);
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).extracting(r -> r.record().response()).containsExactlyInAnyOrder("re: a", "re: b");
            assertThat(records).allSatisfy(r -> assertThat(r.workerId()).isEqualTo("w1"));
        }
    }

    @Test
    void everyFieldOfARecordIsKept() {
        ResponseRecord full = new ResponseRecord("v0", "hello", "llama-3.1-8b", "stop", 123L, new Usage(7, 3));
        ResponseRecord bare = new ResponseRecord("v1", "");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.record(new JobOutcome(JobId.of("j"), List.of(full, bare)), "w9");
            List<StoredRecord> records = new ArrayList<>();
            store.forEachRecord(records::add);
            assertThat(records).extracting(StoredRecord::record).containsExactlyInAnyOrder(full, bare);
            assertThat(records).allSatisfy(r -> {
                assertThat(r.workerId()).isEqualTo("w9");
                assertThat(r.storedAt()).isNotNull();
            });
        }
    }

    @Test
    void reopeningTheFileSeesEverythingStoredBefore() {
        Path file = dir.resolve("r.db");
        List<Job> jobs = TestJobs.jobs("j", 5);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(file)) {
            jobs.subList(0, 3).forEach(j -> store.record(TestJobs.echo(j), "w"));
            store.recordFailure(jobs.get(4).id(), "model API answered 400", 1);
        }
        try (JdbcResultStore store = JdbcResultStore.openSqlite(file)) {
            assertThat(store.recordCount()).isEqualTo(3);
            assertThat(store.completedAmong(jobs)).containsExactlyInAnyOrder(
                    jobs.get(0).id(), jobs.get(1).id(), jobs.get(2).id());
            assertThat(store.isComplete(jobs.get(3))).isFalse();
            List<JobFailure> failures = new ArrayList<>();
            store.forEachFailure(failures::add);
            assertThat(failures).singleElement().satisfies(f -> {
                assertThat(f.jobId()).isEqualTo(jobs.get(4).id());
                assertThat(f.reason()).isEqualTo("model API answered 400");
                assertThat(f.attempts()).isEqualTo(1);
            });
        }
    }

    @Test
    void aPartlyStoredJobIsNotComplete() {
        Job job = TestJobs.job("j", "a", "b");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.record(new JobOutcome(job.id(), List.of(new ResponseRecord("v0", "x"))), "w");
            assertThat(store.isComplete(job)).isFalse();
            assertThat(store.completedAmong(List.of(job))).isEmpty();
            assertThat(store.storedVignetteIds(job.id())).containsExactly("v0");
        }
    }

    @Test
    void aFailureIsReplacedByALaterOneAndClearedByAnAnswer() {
        Job job = TestJobs.job("j", "a");
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("r.db"))) {
            store.recordFailure(job.id(), "first", 1);
            store.recordFailure(job.id(), "second", 3);
            List<JobFailure> failures = new ArrayList<>();
            store.forEachFailure(failures::add);
            assertThat(failures).singleElement().satisfies(f -> {
                assertThat(f.reason()).isEqualTo("second");
                assertThat(f.attempts()).isEqualTo(3);
            });
            store.record(TestJobs.echo(job), "w");
            failures.clear();
            store.forEachFailure(failures::add);
            assertThat(failures).isEmpty();
        }
    }

    @Test
    void concurrentWritersOfTheSameAndDifferentJobsStoreEachRecordOnce() throws Exception {
        Path file = dir.resolve("r.db");
        List<Job> jobs = TestJobs.jobs("j", 200);
        int writers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        // Two stores on one file: writers in two "processes" as well as threads in one.
        try (JdbcResultStore a = JdbcResultStore.openSqlite(file); JdbcResultStore b = JdbcResultStore.openSqlite(file)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                JdbcResultStore store = w % 2 == 0 ? a : b;
                String id = "w" + w;
                results.add(pool.submit(() -> {
                    start.await();
                    int stored = 0;
                    for (Job job : jobs) {
                        stored += store.record(TestJobs.echo(job), id).stored();
                    }
                    return stored;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(200);
            assertThat(a.recordCount()).isEqualTo(200);
            assertThat(a.duplicateCount() + b.duplicateCount()).isEqualTo(600);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aDatabaseFromANewerSchemaIsRefused() throws Exception {
        Path file = dir.resolve("r.db");
        JdbcResultStore.openSqlite(file).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement()) {
            s.execute("INSERT INTO panoptes_schema (version) VALUES (99)");
        }
        assertThatThrownBy(() -> JdbcResultStore.openSqlite(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining("schema version 99").hasMessageContaining("use a newer Panoptes");
    }

    @Test
    void anUnopenablePathSaysWhichAndWhy() {
        Path file = dir.resolve("no/such/dir/r.db");
        assertThatThrownBy(() -> JdbcResultStore.openSqlite(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining(file.toString());
    }

    @Test
    void theStoreUsesWriteAheadLogging() throws Exception {
        Path file = dir.resolve("r.db");
        JdbcResultStore.openSqlite(file).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement();
             var rs = s.executeQuery("PRAGMA journal_mode")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
        }
    }
}

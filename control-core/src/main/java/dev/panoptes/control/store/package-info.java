/**
 * Where outcomes end up: the {@link dev.panoptes.control.store.ResultStore} contract (idempotent by
 * job and vignette, so that at-least-once delivery stores each answer once), kept in memory or on
 * JDBC ({@link dev.panoptes.control.store.JdbcResultStore}: SQLite embedded, PostgreSQL shared), with
 * the runs, their versioned scorings and the one rule for failed answers ({@link
 * dev.panoptes.control.store.FailedAnswers}).
 *
 * <p><b>Threads.</b> Stores are thread-safe. {@code JdbcResultStore} runs each operation under its
 * own lock; its package-private helpers ({@code StoreConnection}, {@code OutcomeWriter} and the SQL
 * by table) are called only under that lock and are not thread-safe themselves.
 */
package dev.panoptes.control.store;

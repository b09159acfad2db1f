import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.report.RunDataLoader;
import dev.panoptes.report.RunData;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

/**
 * The heap a run's summary figures hold, in a JVM of their own over a stored run (the first of the
 * database): "before" is a worker.jar whose summary read the run's rows into a list
 * (RunDataLoader.loadFigures, up to 52b4740), "after" one that streams them into RunDataLoader.stats;
 * "after" measures at the last row, when every answer is counted and the tally is whole.
 * Used heap after System.gc(), less that before reading. See summary-heap.sh.
 */
public class Retained {
    static long used() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    public static void main(String[] args) throws Exception {
        try (JdbcResultStore store = JdbcResultStore.openSqlite(Path.of(args[1]))) {
            String id = RunDataLoader.runIds(store).get(0);
            long rows = store.recordCount(id);
            long base = used();
            if (args[0].equals("before")) {
                RunData data = (RunData) RunDataLoader.class.getMethod("loadFigures", JdbcResultStore.class,
                        String.class, int.class).invoke(null, store, id, 0);
                long held = used() - base;
                System.out.printf("before: %d rows held, %.1f MB, %.0f bytes per answer%n", data.samples().size(),
                        held / 1e6, (double) held / rows);
            } else {
                long[] seen = {0};
                long[] held = {0};
                RunDataLoader.stats(store, id, 0, null, row -> {
                    if (++seen[0] == rows) {
                        held[0] = used() - base; // the tally has every answer counted, the last row in hand
                    }
                });
                System.out.printf("after: %d rows streamed, %.1f MB held at the last, %.0f bytes per answer%n",
                        seen[0], held[0] / 1e6, (double) held[0] / rows);
            }
        }
    }
}

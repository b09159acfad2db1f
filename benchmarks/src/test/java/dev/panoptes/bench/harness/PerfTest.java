package dev.panoptes.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PerfTest {
    @Test
    void shortensJavaSymbolsToClassAndMethod() {
        assertThat(Perf.shortSymbol("tid 31439       [.] void dev.panoptes.remote.ConnectionActor.drainQueue()"))
                .isEqualTo("ConnectionActor.drainQueue");
        assertThat(Perf.shortSymbol("tid 1 [.] java.util.HashMap$Node[] java.util.HashMap.resize()"))
                .isEqualTo("HashMap.resize");
        assertThat(Perf.shortSymbol("[k] pvm_irq_enable")).isEqualTo("pvm_irq_enable");
        assertThat(Perf.shortSymbol("[.] epoll_wait")).isEqualTo("epoll_wait");
    }

    @Test
    void parsesPerfStatCsvAndTraceSummaries() {
        assertThat(Perf.counts("146082,,raw_syscalls:sys_enter,4001,100.00,,\n50966,,context-switches,4001,100.00,,"))
                .containsEntry("raw_syscalls:sys_enter", 146082L).containsEntry("context-switches", 50966L);
        String trace = """
                 java (1234), 100 events
                   syscall            calls  errors  total
                   --------------- --------  ------ --------
                   futex                 10      0     1.0
                   epoll_wait            20      0     2.0
                 java (1235), 10 events
                   futex                  5      0     1.0
                """;
        assertThat(Perf.syscalls(trace)).containsExactly(java.util.Map.entry("epoll_wait", 20L),
                java.util.Map.entry("futex", 15L));
    }
}

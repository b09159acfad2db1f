package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Choices;
import dev.panoptes.control.SpecParams;
import dev.panoptes.eval.LoglikelihoodRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.message.BasicHttpResponse;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What reading one 2xx answer costs the thread that reads it, the model client's I/O thread:
 * CPU (the thread's own, which the machine's load touches less than wall time) and bytes
 * allocated, per answer, for the model-client server's ~400-byte chat completion, a 2.5 KB one,
 * and a vLLM echo+logprobs answer of four choices (12 KB) read as a log-likelihood job reads it.
 * Each answer is made from its bytes as the exchange makes it ({@link Answer}), then parsed.
 * Per body: 200,000 unmeasured reads, then 5 batches of 200,000; it prints the median batch
 * with the min-max. In this package because the readers are package-private; run with
 * {@code java -cp benchmarks/target/benchmarks.jar dev.panoptes.eval.http.AnswerParseCost}
 * (BENCHMARKS.md section 8). Single-threaded; not a test.
 */
public final class AnswerParseCost {
    private static final String CHAT = "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":1700000000,"
            + "\"model\":\"bench-model\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
            + "\"4\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":"
            + "{\"prompt_tokens\":14,\"completion_tokens\":1,\"total_tokens\":15,\"prompt_tokens_details\":"
            + "{\"cached_tokens\":0}},\"service_tier\":\"default\",\"system_fingerprint\":\"fp_bench\"}";

    private interface Op {
        Object run() throws Exception;
    }

    private AnswerParseCost() {
    }

    /** Runs the measurement and prints one line per body; no arguments. */
    public static void main(String[] args) throws Exception {
        // As HttpModelClient configures its mapper.
        ObjectMapper mapper = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
        ChatCompletions chat = new ChatCompletions(mapper);
        TextCompletions text = new TextCompletions(mapper);
        String longContent = "The answer, step by step: ".repeat(80);
        String chatLong = CHAT.replace("\"content\":\"4\"", "\"content\":\"" + longContent + "\"");
        // A vLLM echo+logprobs answer: 4 choices, a 60-token context and a 3-token continuation each.
        String context = "word ".repeat(60);
        List<String> conts = List.of("alpha beta gamma", "delta epsilon zeta", "eta theta iota", "kappa lambda mu");
        StringBuilder ll = new StringBuilder("{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\",\"choices\":[");
        for (int c = 0; c < 4; c++) {
            String prompt = context + conts.get(c);
            String[] words = prompt.split("(?<= )");
            StringBuilder toks = new StringBuilder(), lps = new StringBuilder(), tops = new StringBuilder(), offs = new StringBuilder();
            int off = 0;
            for (int i = 0; i <= words.length; i++) {
                String w = i < words.length ? words[i] : "!";
                String sep = i == 0 ? "" : ",";
                toks.append(sep).append('"').append(w).append('"');
                lps.append(sep).append(i == 0 ? "null" : String.format(Locale.ROOT, "%.6f", -1.0 - i * 0.01));
                tops.append(sep).append(i == 0 ? "null" : "{\"" + w + "\":" + String.format(Locale.ROOT, "%.6f", -1.0 - i * 0.01) + "}");
                offs.append(sep).append(off);
                off += w.length();
            }
            ll.append(c == 0 ? "" : ",").append("{\"index\":").append(c).append(",\"text\":\"").append(prompt).append("!\",\"logprobs\":{\"tokens\":[")
                    .append(toks).append("],\"token_logprobs\":[").append(lps).append("],\"top_logprobs\":[").append(tops)
                    .append("],\"text_offset\":[").append(offs).append("]},\"finish_reason\":\"length\"}");
        }
        ll.append("],\"usage\":{\"prompt_tokens\":252,\"completion_tokens\":4,\"total_tokens\":256}}");
        LoglikelihoodRequest request = new LoglikelihoodRequest(context, new Choices(conts, ""), SpecParams.NONE);
        byte[] chatBytes = CHAT.getBytes(StandardCharsets.UTF_8);
        byte[] chatLongBytes = chatLong.getBytes(StandardCharsets.UTF_8);
        byte[] llBytes = ll.toString().getBytes(StandardCharsets.UTF_8);
        measure("chat completion, " + chatBytes.length + " B", () -> chat.parseResponse(answer(chatBytes)));
        measure("chat completion, " + chatLongBytes.length + " B", () -> chat.parseResponse(answer(chatLongBytes)));
        measure("log-likelihoods, 4 choices, " + llBytes.length + " B", () -> text.parseLoglikelihoods(answer(llBytes), request));
    }

    private static Answer answer(byte[] bytes) {
        BasicHttpResponse head = new BasicHttpResponse(200);
        head.addHeader("Content-Type", "application/json");
        return new Answer(new Message<HttpResponse, byte[]>(head, bytes));
    }

    private static void measure(String name, Op op) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        int n = 200_000;
        Object sink = null;
        for (int i = 0; i < n; i++) { sink = op.run(); }
        List<Double> cpu = new ArrayList<>();
        List<Double> alloc = new ArrayList<>();
        for (int r = 0; r < 5; r++) {
            long c0 = mx.getCurrentThreadCpuTime();
            long a0 = mx.getThreadAllocatedBytes(id);
            for (int i = 0; i < n; i++) { sink = op.run(); }
            cpu.add((mx.getCurrentThreadCpuTime() - c0) / 1000.0 / n);
            alloc.add((mx.getThreadAllocatedBytes(id) - a0) / (double) n);
        }
        cpu.sort(null);
        alloc.sort(null);
        System.out.printf(Locale.ROOT, "%-40s CPU %.2f us (%.2f-%.2f)  allocated %.0f B per answer  [%s]%n", name,
                cpu.get(2), cpu.get(0), cpu.get(4), alloc.get(2), sink == null ? "" : "ok");
    }
}

package dev.panoptes.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One page in a headless Chromium driven over the DevTools protocol, as a person would use it:
 * {@link #click} presses and releases the mouse at the middle of an element (a real input event,
 * which the page's listeners receive as from a mouse), and {@link #evaluate} reads the DOM back.
 *
 * <p>Chromium listens on an ephemeral loopback port ({@code --remote-debugging-port=0}) and
 * prints it on standard error, which a thread reads (and keeps draining). Each call waits for
 * its answer with a timeout. Close it to end the browser. Used by one test thread.
 */
final class DevToolsPage implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Process process;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<JsonNode>> events = new ConcurrentHashMap<>();

    private DevToolsPage(Process process, WebSocket socket) {
        this.process = process;
        this.socket = socket;
    }

    /**
     * Starts Chromium on about:blank and attaches to its page.
     *
     * @param chromium the browser binary
     * @param profile  an empty folder for its profile
     */
    static DevToolsPage start(String chromium, Path profile) throws Exception {
        Process process = new ProcessBuilder(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                "--window-size=1280,2000", "--user-data-dir=" + profile, "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        try {
            CompletableFuture<String> browserUrl = new CompletableFuture<>();
            Thread reader = new Thread(() -> readStderr(process, browserUrl), "chromium-stderr");
            reader.setDaemon(true);
            reader.start();
            URI browser = URI.create(browserUrl.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            HttpClient http = HttpClient.newHttpClient();
            String pageSocket = null;
            // The page target exists once the browser has opened about:blank; its socket URL is in /json/list.
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (pageSocket == null && System.nanoTime() < deadline) {
                String list = http.send(HttpRequest.newBuilder(URI.create("http://" + browser.getAuthority()
                        + "/json/list")).timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString()).body();
                for (JsonNode target : JSON.readTree(list)) {
                    if ("page".equals(target.path("type").asText())) {
                        pageSocket = target.get("webSocketDebuggerUrl").asText();
                    }
                }
            }
            if (pageSocket == null) {
                throw new AssertionError("chromium opened no page within " + TIMEOUT);
            }
            DevToolsPage[] page = new DevToolsPage[1];
            Listener listener = new Listener(page);
            WebSocket socket = http.newWebSocketBuilder().buildAsync(URI.create(pageSocket), listener)
                    .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            page[0] = new DevToolsPage(process, socket);
            listener.ready.complete(null);
            page[0].call("Page.enable", JSON.createObjectNode());
            page[0].call("Runtime.enable", JSON.createObjectNode());
            return page[0];
        } catch (Exception | AssertionError e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /** Opens a URL and returns once its load event fired. */
    void open(String url) throws Exception {
        CompletableFuture<JsonNode> loaded = new CompletableFuture<>();
        events.put("Page.loadEventFired", loaded);
        ObjectNode params = JSON.createObjectNode().put("url", url);
        call("Page.navigate", params);
        loaded.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * Reloads the page, in the renderer that shows it, and returns once its load event fired: a
     * page with a large script loads so far sooner than by {@link #open} from another page, its
     * renderer having compiled the script before.
     */
    void reload() throws Exception {
        CompletableFuture<JsonNode> loaded = new CompletableFuture<>();
        events.put("Page.loadEventFired", loaded);
        call("Page.reload", JSON.createObjectNode());
        loaded.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * Lays the page out as a window of this size would (CSS pixels, scale 1) until
     * {@link #defaultViewport()}; the page is laid out again at once.
     */
    void viewport(int width, int height) throws Exception {
        call("Emulation.setDeviceMetricsOverride", JSON.createObjectNode().put("width", width).put("height", height)
                .put("deviceScaleFactor", 1).put("mobile", false));
    }

    /** Back to the window's own size (1280 x 2000). */
    void defaultViewport() throws Exception {
        call("Emulation.clearDeviceMetricsOverride", JSON.createObjectNode());
    }

    /** Writes a PNG of the page as it is shown (the window is 1280 x 2000). */
    void screenshot(Path png) throws Exception {
        JsonNode shot = call("Page.captureScreenshot", JSON.createObjectNode().put("format", "png"));
        java.nio.file.Files.write(png, java.util.Base64.getDecoder().decode(shot.get("data").asText()));
    }

    /** The value of a JavaScript expression, which must be JSON-serializable. */
    JsonNode evaluate(String expression) throws Exception {
        ObjectNode params = JSON.createObjectNode().put("expression", expression).put("returnByValue", true);
        JsonNode result = call("Runtime.evaluate", params);
        if (result.has("exceptionDetails")) {
            throw new AssertionError("the page threw evaluating " + expression + ": " + result.get("exceptionDetails"));
        }
        return result.get("result").get("value");
    }

    /**
     * The value a JavaScript promise resolves to (which must be JSON-serializable): the page's own
     * timers do the waiting, so a test waits for what a page shows without sleeping.
     */
    JsonNode awaitPromise(String expression) throws Exception {
        ObjectNode params = JSON.createObjectNode().put("expression", expression).put("returnByValue", true)
                .put("awaitPromise", true);
        JsonNode result = call("Runtime.evaluate", params);
        if (result.has("exceptionDetails")) {
            throw new AssertionError("the page's promise failed: " + expression + ": " + result.get("exceptionDetails"));
        }
        return result.get("result").get("value");
    }

    /** A left click at the middle of the first element matching a CSS selector, as mouse events. */
    void click(String selector) throws Exception {
        JsonNode box = evaluate("(function () { var e = document.querySelector(" + JSON.writeValueAsString(selector)
                + "); if (!e) { return null; } e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
                + " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()");
        if (box == null || box.isNull()) {
            throw new AssertionError("no element " + selector + " to click");
        }
        for (String type : List.of("mousePressed", "mouseReleased")) {
            ObjectNode params = JSON.createObjectNode().put("type", type).put("x", box.get("x").asDouble())
                    .put("y", box.get("y").asDouble()).put("button", "left").put("clickCount", 1);
            call("Input.dispatchMouseEvent", params);
        }
    }

    private JsonNode call(String method, ObjectNode params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        ObjectNode message = JSON.createObjectNode().put("id", id).put("method", method);
        message.set("params", params);
        socket.sendText(JSON.writeValueAsString(message), true).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        JsonNode reply = answer.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (reply.has("error")) {
            throw new AssertionError(method + " failed: " + reply.get("error"));
        }
        return reply.get("result");
    }

    private void onMessage(String text) {
        try {
            JsonNode message = JSON.readTree(text);
            if (message.has("id")) {
                CompletableFuture<JsonNode> answer = pending.remove(message.get("id").asInt());
                if (answer != null) {
                    answer.complete(message);
                }
            } else if (message.has("method")) {
                CompletableFuture<JsonNode> event = events.remove(message.get("method").asText());
                if (event != null) {
                    event.complete(message.get("params"));
                }
            }
        } catch (IOException e) {
            pending.values().forEach(f -> f.completeExceptionally(e));
        }
    }

    private static void readStderr(Process process, CompletableFuture<String> browserUrl) {
        StringBuilder seen = new StringBuilder();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    browserUrl.complete(m.group(1));
                } else if (!browserUrl.isDone() && seen.length() < 4_000) {
                    seen.append(line).append('\n');
                }
            }
        } catch (IOException ignored) {
            // The browser ended; the check below says so.
        }
        browserUrl.completeExceptionally(new AssertionError("chromium ended without a DevTools address; stderr:\n"
                + seen));
    }

    /**
     * Ends the browser and every process it started, forcibly after 2 s (a test's throwaway profile
     * needs no orderly shutdown, and a headless Chromium that hangs in it must not cost the suite
     * more), and returns only once they have all exited: a renderer or utility process that
     * outlives the browser by a few milliseconds still writes into the profile, and the test's
     * temporary folder then fails to be deleted. Keeps the interrupt flag if interrupted meanwhile.
     */
    @Override
    public void close() {
        socket.abort();
        // Taken before the browser ends: its children are no longer its descendants once it has.
        List<ProcessHandle> family = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(2, TimeUnit.SECONDS)) {
                family.forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
            for (ProcessHandle child : family) {
                awaitExit(child);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            family.forEach(ProcessHandle::destroyForcibly);
            Thread.currentThread().interrupt();
        }
    }

    /** Waits up to 2 s for a process the browser started to end by itself, then ends it. */
    private static void awaitExit(ProcessHandle child) throws InterruptedException {
        try {
            child.onExit().get(2, TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            child.destroyForcibly();
            try {
                child.onExit().get(10, TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException ignored) {
                // Still there after SIGKILL and 10 s: nothing more a test can do.
            }
        }
    }

    /** Hands each complete text message to the page; parts of one message are joined first. */
    private static final class Listener implements WebSocket.Listener {
        final CompletableFuture<Void> ready = new CompletableFuture<>();
        private final DevToolsPage[] page;
        private final StringBuilder partial = new StringBuilder();

        Listener(DevToolsPage[] page) {
            this.page = page;
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                String text = partial.toString();
                partial.setLength(0);
                ready.thenRun(() -> page[0].onMessage(text));
            }
            webSocket.request(1);
            return null;
        }
    }
}

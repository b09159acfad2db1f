package dev.panoptes.testing;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads an admin endpoint the way Prometheus and people do: over HTTP, on loopback. */
public final class Scrapes {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})? (\\S+)$",
            Pattern.MULTILINE);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Scrapes() {
    }

    public static HttpResponse<String> get(InetSocketAddress admin, String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + admin.getHostString() + ":"
                + admin.getPort() + path)).timeout(Duration.ofSeconds(5));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    public static String metrics(InetSocketAddress admin) throws Exception {
        return metrics(admin, null);
    }

    /** GET /metrics with {@code Authorization: Bearer token} (none when null); it must answer 200. */
    public static String metrics(InetSocketAddress admin, String token) throws Exception {
        HttpResponse<String> response = get(admin, "/metrics", token);
        if (response.statusCode() != 200) {
            throw new AssertionError("GET /metrics answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    /** The sum of every sample of {@code name} whose labels contain {@code labelPart} (or all, when null). */
    public static double value(String scrape, String name, String labelPart) {
        double sum = 0;
        boolean found = false;
        Matcher m = SAMPLE.matcher(scrape);
        while (m.find()) {
            if (m.group(1).equals(name) && (labelPart == null || (m.group(2) != null && m.group(2).contains(labelPart)))) {
                sum += Double.parseDouble(m.group(3));
                found = true;
            }
        }
        if (!found) {
            throw new AssertionError("no sample of " + name + (labelPart == null ? "" : " with " + labelPart)
                    + " in the scrape:\n" + scrape);
        }
        return sum;
    }

    public static double value(String scrape, String name) {
        return value(scrape, name, null);
    }

    /** Every label name used in the scrape. */
    public static List<String> labelNames(String scrape) {
        List<String> names = new ArrayList<>();
        Matcher m = SAMPLE.matcher(scrape);
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
        while (m.find()) {
            if (m.group(2) != null) {
                Matcher l = label.matcher(m.group(2));
                while (l.find()) {
                    if (!names.contains(l.group(1))) {
                        names.add(l.group(1));
                    }
                }
            }
        }
        return names;
    }
}

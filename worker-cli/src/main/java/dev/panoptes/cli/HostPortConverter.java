package dev.panoptes.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.net.InetSocketAddress;

/**
 * Converts {@code HOST:PORT} (IPv6 hosts in brackets, {@code [::1]:7070}) to an unresolved
 * {@link InetSocketAddress}: the host is looked up when connecting, on every attempt, so that a
 * coordinator that is not resolvable yet is not a usage error. Reusable by any subcommand.
 */
public final class HostPortConverter implements ITypeConverter<InetSocketAddress> {
    /**
     * @throws TypeConversionException naming what was expected and what was given
     */
    @Override
    public InetSocketAddress convert(String value) {
        return parse(value);
    }

    /**
     * Parses {@code HOST:PORT}; usable outside picocli.
     *
     * @throws TypeConversionException when the value is not HOST:PORT with a port in 1..65535
     */
    public static InetSocketAddress parse(String value) {
        return parse(value, 1);
    }

    /**
     * Parses {@code HOST:PORT} with a port from {@code lowestPort} to 65535 (0 lets a listener
     * pick any free port).
     *
     * @throws TypeConversionException when the value is not HOST:PORT with a port in range
     */
    static InetSocketAddress parse(String value, int lowestPort) {
        String text = value == null ? "" : value.trim();
        String host;
        String port;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                throw malformed(value);
            }
            host = text.substring(1, close);
            port = text.substring(close + 2);
        } else {
            int colon = text.lastIndexOf(':');
            if (colon < 0 || text.indexOf(':') != colon) {
                throw malformed(value);
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
        }
        if (host.isEmpty() || port.isEmpty()) {
            throw malformed(value);
        }
        int portNumber;
        try {
            portNumber = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("port must be a number from " + lowestPort + " to 65535, got '"
                    + port + "'");
        }
        if (portNumber < lowestPort || portNumber > 65535) {
            throw new TypeConversionException("port must be from " + lowestPort + " to 65535, got " + portNumber);
        }
        return InetSocketAddress.createUnresolved(host, portNumber);
    }

    private static TypeConversionException malformed(String value) {
        return new TypeConversionException("expected HOST:PORT (for example 10.0.0.5:7070 or [::1]:7070), got '"
                + value + "'");
    }

    /**
     * {@code HOST:PORT[,HOST:PORT...]}: one address or several, in order (a primary coordinator's
     * and its standbys'); each as {@link #parse(String)} takes it, the first bad one named.
     */
    public static final class Several implements ITypeConverter<Addresses> {
        @Override
        public Addresses convert(String value) {
            java.util.List<InetSocketAddress> all = new java.util.ArrayList<>();
            for (String part : (value == null ? "" : value).split(",", -1)) {
                all.add(parse(part));
            }
            return new Addresses(all);
        }
    }

    /** What {@link Several} gives: at least one address, in the order given. */
    public record Addresses(java.util.List<InetSocketAddress> list) {
        public Addresses {
            list = java.util.List.copyOf(list);
        }
    }

    /** {@code HOST:PORT} for a listener: port 0 picks any free port, and the command prints the one it got. */
    public static final class Listen implements ITypeConverter<InetSocketAddress> {
        @Override
        public InetSocketAddress convert(String value) {
            return parse(value, 0);
        }
    }
}

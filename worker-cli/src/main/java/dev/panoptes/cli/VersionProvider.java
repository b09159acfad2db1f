package dev.panoptes.cli;

import dev.panoptes.control.wire.Message;
import picocli.CommandLine.IVersionProvider;

/**
 * {@code --version}: the jar's Implementation-Version (written by the build into the manifest),
 * the protocol version, and the Java runtime.
 */
public final class VersionProvider implements IVersionProvider {
    /** Never throws; a build without a manifest says "development build". */
    @Override
    public String[] getVersion() {
        String version = VersionProvider.class.getPackage().getImplementationVersion();
        return new String[] {
            "${COMMAND-FULL-NAME} " + (version == null ? "(development build)" : version),
            "Panoptes worker protocol " + Message.PROTOCOL_VERSION,
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")"
        };
    }
}

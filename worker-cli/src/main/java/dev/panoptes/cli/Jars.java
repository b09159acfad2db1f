package dev.panoptes.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** How to start this same program again, as a command line and as a child process. */
final class Jars {
    private Jars() {
    }

    /** What a user types to run this program: {@code java -jar <path of this jar>}, or a class-path form. */
    static String selfCommand() {
        String classPath = System.getProperty("java.class.path", "");
        if (classPath.endsWith(".jar") && !classPath.contains(java.io.File.pathSeparator)) {
            Path jar = Path.of(classPath);
            Path relative = jar.isAbsolute() ? Path.of("").toAbsolutePath().relativize(jar) : jar;
            return "java -jar " + (relative.toString().startsWith("..") ? jar : relative);
        }
        return "java -jar worker.jar";
    }

    /** The argument list that starts {@link WorkerMain} in a new JVM with this JVM's class path. */
    static List<String> javaCommand() {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(WorkerMain.class.getName());
        return command;
    }
}

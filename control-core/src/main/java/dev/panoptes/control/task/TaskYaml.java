package dev.panoptes.control.task;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An lm-eval task YAML file as lm-eval reads it: its top-level mapping, with the files it
 * {@code include}s merged in first (local keys win, as lm-eval's {@code load_yaml} does; an
 * include is relative to the including file; a cycle is refused). Each top-level key keeps the
 * file and line it came from, for messages. Nodes are composed, never constructed: a tag such
 * as {@code !function} (a Python hook) becomes a problem naming its place, not an exception.
 *
 * <p>Immutable once read.
 */
final class TaskYaml {
    private static final String STANDARD_TAG_PREFIX = Tag.PREFIX;
    private final Map<String, Object> values;
    private final Map<String, String> where;
    private final String shown;

    private TaskYaml(Map<String, Object> values, Map<String, String> where, String shown) {
        this.values = values;
        this.where = where;
        this.shown = shown;
    }

    /** The merged top-level keys and their values (maps, lists, strings, longs, doubles, booleans, nulls). */
    Map<String, Object> values() {
        return values;
    }

    /** Where a key was set: "FILE line N" (line 1 of the task file for a key it lacks). */
    String where(String key) {
        return where.getOrDefault(key, shown + " line 1");
    }

    /**
     * Reads a task file and its includes.
     *
     * @param problems where every problem goes, each naming its file and line
     * @return the task, or null when a file could not be parsed at all
     */
    static TaskYaml read(Path file, List<String> problems) throws IOException {
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, String> where = new LinkedHashMap<>();
        if (!read(file.toAbsolutePath().normalize(), file.toString(), values, where, problems, new HashSet<>())) {
            return null;
        }
        return new TaskYaml(values, where, file.toString());
    }

    private static boolean read(Path file, String shown, Map<String, Object> into, Map<String, String> where,
                                List<String> problems, Set<Path> seen) throws IOException {
        if (!seen.add(file)) {
            problems.add(shown + ": include cycle: this file includes itself through its includes");
            return false;
        }
        Node root;
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(50);
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            root = new Yaml(options).compose(reader);
        } catch (MarkedYAMLException e) {
            problems.add(shown + " line " + (e.getProblemMark() == null ? 1 : e.getProblemMark().getLine() + 1)
                    + ": not valid YAML: " + e.getProblem());
            return false;
        } catch (YAMLException e) {
            problems.add(shown + ": not valid YAML: " + e.getMessage());
            return false;
        }
        if (!(root instanceof MappingNode mapping)) {
            problems.add(shown + " line 1: an lm-eval task file is a YAML mapping (task:, dataset_path:, ...),"
                    + " this one is not");
            return false;
        }
        Map<String, Object> own = new LinkedHashMap<>();
        Map<String, String> ownWhere = new LinkedHashMap<>();
        for (NodeTuple t : mapping.getValue()) {
            if (!(t.getKeyNode() instanceof ScalarNode key)) {
                problems.add(shown + " line " + line(t.getKeyNode()) + ": a key that is not a plain name");
                continue;
            }
            String name = key.getValue();
            own.put(name, value(t.getValueNode(), name, shown, problems));
            ownWhere.put(name, shown + " line " + line(key));
        }
        Object include = own.remove("include");
        if (include != null) {
            List<Object> includes = include instanceof List<?> l ? new ArrayList<>(l) : List.of(include);
            for (Object inc : includes) {
                if (!(inc instanceof String name)) {
                    problems.add(ownWhere.get("include") + ": include names a YAML file, got " + inc);
                    continue;
                }
                Path target = Path.of(name).isAbsolute() ? Path.of(name) : file.getParent().resolve(name);
                if (!Files.isRegularFile(target)) {
                    problems.add(ownWhere.get("include") + ": include '" + name + "': no such file " + target
                            + " (an include is read relative to the file that includes it)");
                    continue;
                }
                Map<String, Object> inner = new LinkedHashMap<>();
                Map<String, String> innerWhere = new LinkedHashMap<>();
                String innerShown = Path.of(shown).getParent() == null ? name
                        : Path.of(shown).getParent().resolve(name).toString();
                if (read(target.toAbsolutePath().normalize(), innerShown, inner, innerWhere, problems, seen)) {
                    // lm-eval does not inherit a base's task_list.
                    inner.remove("task_list");
                    into.putAll(inner);
                    where.putAll(innerWhere);
                }
            }
        }
        into.putAll(own);
        where.putAll(ownWhere);
        seen.remove(file);
        return true;
    }

    private static int line(Node node) {
        return node.getStartMark() == null ? 1 : node.getStartMark().getLine() + 1;
    }

    /** A node as plain Java values; a tag that is not YAML's own is a problem (and the value null). */
    private static Object value(Node node, String path, String shown, List<String> problems) {
        Tag tag = node.getTag();
        if (tag != null && !tag.getValue().startsWith(STANDARD_TAG_PREFIX) && TaskFields.REFUSED.containsKey(path)) {
            // The field itself is refused, with what to do about it.
            return tag.getValue();
        }
        if (tag != null && !tag.getValue().startsWith(STANDARD_TAG_PREFIX)) {
            String what = "!function".equals(tag.getValue())
                    ? " (a Python function lm-eval imports and calls): Panoptes runs no Python; write the field as"
                    + " a document field name or a Jinja template, or drop the task"
                    : ": Panoptes reads plain YAML values only";
            problems.add(shown + " line " + line(node) + ": " + path + " is tagged " + tag.getValue() + what);
            return null;
        }
        if (node instanceof MappingNode m) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (NodeTuple t : m.getValue()) {
                String k = t.getKeyNode() instanceof ScalarNode s ? s.getValue() : String.valueOf(t.getKeyNode());
                map.put(k, value(t.getValueNode(), path + "." + k, shown, problems));
            }
            return map;
        }
        if (node instanceof SequenceNode s) {
            List<Object> list = new ArrayList<>();
            int i = 0;
            for (Node n : s.getValue()) {
                list.add(value(n, path + "[" + i++ + "]", shown, problems));
            }
            return list;
        }
        ScalarNode scalar = (ScalarNode) node;
        String text = scalar.getValue();
        if (Tag.NULL.equals(tag)) {
            return null;
        }
        if (Tag.BOOL.equals(tag)) {
            return Boolean.parseBoolean(text.toLowerCase(java.util.Locale.ROOT))
                    || "yes".equalsIgnoreCase(text) || "on".equalsIgnoreCase(text);
        }
        if (Tag.INT.equals(tag)) {
            try {
                return Long.parseLong(text.replace("_", ""));
            } catch (NumberFormatException e) {
                return text;
            }
        }
        if (Tag.FLOAT.equals(tag)) {
            try {
                return Double.parseDouble(text.replace("_", ""));
            } catch (NumberFormatException e) {
                return text;
            }
        }
        return text;
    }
}

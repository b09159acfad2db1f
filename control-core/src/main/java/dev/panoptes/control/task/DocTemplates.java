package dev.panoptes.control.task;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code doc_to_*} fields of an lm-eval task applied to one document, as lm-eval applies
 * them: a name of one of the document's fields is that field's value; any other text is a Jinja
 * template rendered with the document's fields (Jinjava, failing on an unknown name as lm-eval's
 * {@code StrictUndefined} does). Where lm-eval parses the rendered text as a Python literal
 * ({@code doc_to_choice}, and {@code doc_to_target} when it renders a list or a number), a
 * template that is one expression, such as {@code {{choices.text}}} or {@code {{[sol1, sol2]}}},
 * is evaluated to its value instead: the same list or number, without Python's literal syntax.
 *
 * <p>Thread-safe: Jinjava renders each call in its own interpreter.
 */
final class DocTemplates {
    private static final Pattern ONE_EXPRESSION = Pattern.compile("^\\s*\\{\\{(.*)\\}\\}\\s*$", Pattern.DOTALL);
    private final Jinjava jinjava = new Jinjava(JinjavaConfig.newBuilder().withFailOnUnknownTokens(true).build());

    /** A template could not be applied to a document. */
    static final class TemplateException extends Exception {
        private static final long serialVersionUID = 1L;

        TemplateException(String message) {
            super(message);
        }
    }

    /** {@code template} rendered as text with the document's fields. */
    String render(String template, Map<String, Object> doc) throws TemplateException {
        RenderResult result = jinjava.renderForResult(template, doc);
        for (TemplateError e : result.getErrors()) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new TemplateException("the Jinja template " + quote(template) + " fails on this document: "
                        + e.getMessage());
            }
        }
        return result.getOutput();
    }

    /**
     * A field's value or, for a template, its value: one expression evaluated to its object, any
     * other template rendered as text.
     */
    Object value(String spec, Map<String, Object> doc) throws TemplateException {
        if (doc.containsKey(spec)) {
            return doc.get(spec);
        }
        Matcher m = ONE_EXPRESSION.matcher(spec);
        if (m.matches() && !m.group(1).contains("}}") && !m.group(1).contains("{{") && !spec.contains("{%")) {
            return plain(evaluate(m.group(1).trim(), doc, spec));
        }
        return render(spec, doc);
    }

    private Object evaluate(String expression, Map<String, Object> doc, String template) throws TemplateException {
        JinjavaInterpreter interpreter = jinjava.newInterpreter();
        interpreter.getContext().putAll(doc);
        try (var current = JinjavaInterpreter.closeablePushCurrent(interpreter).get()) {
            Object v = current.value().resolveELExpression(expression, 1);
            for (TemplateError e : interpreter.getErrors()) {
                if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                    throw new TemplateException("the Jinja template " + quote(template)
                            + " fails on this document: " + e.getMessage());
                }
            }
            return v;
        } catch (RuntimeException e) {
            throw new TemplateException("the Jinja template " + quote(template) + " fails on this document: "
                    + e.getMessage());
        }
    }

    /** Jinjava's values as plain Java ones: lists as lists, whole numbers as longs. */
    private static Object plain(Object v) {
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object o : list) {
                out.add(plain(o));
            }
            return out;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        return v;
    }

    static String quote(String template) {
        String oneLine = template.replace("\n", "\\n");
        return "'" + (oneLine.length() > 80 ? oneLine.substring(0, 77) + "..." : oneLine) + "'";
    }
}

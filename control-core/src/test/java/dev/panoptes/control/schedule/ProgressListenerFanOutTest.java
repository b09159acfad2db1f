package dev.panoptes.control.schedule;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ProgressListener#fanOut}, which the CLI uses to give one run its progress output, its cost
 * budget and its run record at once: every event, with its arguments as given, reaches each
 * listener, in list order, and none is lost or added.
 */
class ProgressListenerFanOutTest {
    @Test
    void everyEventReachesEveryListenerInListOrder() throws Exception {
        List<String> heard = new ArrayList<>();
        List<ProgressListener> listeners = new ArrayList<>(List.of(recorder("first", heard), recorder("second", heard)));
        ProgressListener fanOut = ProgressListener.fanOut(listeners);
        listeners.clear(); // the fan-out copied the list

        List<String> expected = new ArrayList<>();
        int n = 0;
        for (Method m : ProgressListener.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            n++;
            Object[] args = arguments(m, n);
            m.invoke(fanOut, args);
            expected.add("first " + describe(m, args));
            expected.add("second " + describe(m, args));
        }
        assertThat(n).as("events of ProgressListener").isGreaterThanOrEqualTo(12);
        assertThat(heard).containsExactlyElementsOf(expected);
    }

    private static ProgressListener recorder(String name, List<String> heard) {
        return (ProgressListener) Proxy.newProxyInstance(ProgressListener.class.getClassLoader(),
                new Class<?>[] {ProgressListener.class}, (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return method.getName().equals("equals") ? proxy == args[0]
                                : method.getName().equals("hashCode") ? System.identityHashCode(proxy) : name;
                    }
                    heard.add(name + " " + describe(method, args == null ? new Object[0] : args));
                    return null;
                });
    }

    /** Distinct values per event and parameter, so that an argument passed in the wrong place shows. */
    private static Object[] arguments(Method m, int event) {
        Class<?>[] types = m.getParameterTypes();
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            int v = event * 10 + i + 1;
            Class<?> t = types[i];
            args[i] = t == int.class ? v
                    : t == long.class ? (long) v
                    : t == boolean.class ? v % 2 == 0
                    : t == Duration.class ? Duration.ofMillis(v)
                    : t == String.class ? "s" + v
                    : t == Set.class ? Set.of("m" + v)
                    : t == List.class ? List.of()
                    : t == Throwable.class ? new IllegalStateException("e" + v)
                    : null;
        }
        return args;
    }

    private static String describe(Method m, Object[] args) {
        return m.getName() + Arrays.toString(args);
    }
}

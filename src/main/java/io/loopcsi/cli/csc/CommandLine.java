package io.loopcsi.cli.csc;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The words of a csc command line split into positionals (service, verb, arguments) and flags,
 * as pflag does: flags may come anywhere, {@code --flag value} and {@code --flag=value} are
 * equivalent, a switch takes an optional {@code =true|false}, and {@code --} ends the flags.
 * Values are kept as strings; {@link Options} gives them meaning.
 */
final class CommandLine {

    private final List<String> positionals;
    private final Map<Flag, List<String>> values;

    private CommandLine(List<String> positionals, Map<Flag, List<String>> values) {
        this.positionals = List.copyOf(positionals);
        this.values = values;
    }

    static CommandLine parse(List<String> words) throws UsageException {
        List<String> positionals = new ArrayList<>();
        Map<Flag, List<String>> values = new EnumMap<>(Flag.class);
        for (int i = 0; i < words.size(); i++) {
            String word = words.get(i);
            if (word.equals("--")) {
                positionals.addAll(words.subList(i + 1, words.size()));
                break;
            }
            if (!word.startsWith("-") || word.equals("-")) {
                positionals.add(word);
                continue;
            }
            int eq = word.indexOf('=');
            String name = eq > 0 ? word.substring(0, eq) : word;
            String inline = eq > 0 ? word.substring(eq + 1) : null;
            Flag flag = Flag.byName(name);
            if (flag == null) {
                throw new UsageException("unknown flag " + name);
            }
            String value;
            if (flag.takesValue) {
                if (inline != null) {
                    value = inline;
                } else if (i + 1 < words.size()) {
                    value = words.get(++i);
                } else {
                    throw new UsageException("flag " + name + " needs a value: " + name + " " + flag.valueName);
                }
            } else {
                value = inline == null ? "true" : switchValue(name, inline);
            }
            values.computeIfAbsent(flag, f -> new ArrayList<>()).add(value);
        }
        return new CommandLine(positionals, values);
    }

    private static String switchValue(String name, String v) throws UsageException {
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return v.toLowerCase();
        }
        throw new UsageException("flag " + name + " is a switch: " + name + " or " + name + "=true|false, not " + name + "=" + v);
    }

    List<String> positionals() {
        return positionals;
    }

    Set<Flag> flags() {
        return values.keySet();
    }

    boolean has(Flag f) {
        return values.containsKey(f);
    }

    /** Every value given for a repeatable flag, in order; empty when absent. */
    List<String> all(Flag f) {
        return values.getOrDefault(f, List.of());
    }

    /** The value of a single-valued flag (the last one wins, as in pflag), or null when absent. */
    String last(Flag f) {
        List<String> v = values.get(f);
        return v == null ? null : v.get(v.size() - 1);
    }

    boolean isOn(Flag f) {
        return "true".equals(last(f));
    }
}

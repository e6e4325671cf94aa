package io.loopcsi.cli.csc;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * One csc verb: the RPC it invokes, the words it answers to, the positional arguments and the
 * flags it takes (besides {@link Flag#GLOBAL}), and what it does.
 *
 * @param maxArgs -1 for "any number" (the verb sends one request per argument)
 */
record Verb(String service, String name, List<String> aliases, String rpc, String argsUsage, int minArgs, int maxArgs,
        Set<Flag> flags, Action action) {

    /** Runs the verb; a {@link UsageException} must be thrown before the first RPC. */
    interface Action {
        void run(Call call) throws UsageException;
    }

    /** What a verb works with: its positional arguments, the parsed flags, the driver, stdout. */
    record Call(List<String> args, Options opt, Connection csi, Output out) {
    }

    static Verb of(String service, String name, List<String> aliases, String rpc, String argsUsage, int minArgs, int maxArgs,
            List<Flag> flags, Action action) {
        Set<Flag> all = EnumSet.copyOf(Flag.GLOBAL);
        all.addAll(flags);
        return new Verb(service, name, aliases, rpc, argsUsage, minArgs, maxArgs, all, action);
    }

    boolean answersTo(String word) {
        return name.equals(word) || aliases.contains(word);
    }

    String fullName() {
        return service + " " + name;
    }

    /** Rejects flags this verb would ignore and a wrong number of arguments. */
    void check(CommandLine line, List<String> args) throws UsageException {
        for (Flag f : line.flags()) {
            if (!flags.contains(f)) {
                throw new UsageException("flag " + f.canonical() + " does not apply to '" + fullName() + "'");
            }
        }
        if (args.size() < minArgs || maxArgs >= 0 && args.size() > maxArgs) {
            String expected = maxArgs < 0 ? "at least " + minArgs : minArgs == maxArgs ? Integer.toString(minArgs)
                    : minArgs + " to " + maxArgs;
            boolean one = minArgs == 1 && (maxArgs == 1 || maxArgs < 0); // "1 argument", "at least 1 argument"
            throw new UsageException("'" + fullName() + "' takes " + expected + " argument" + (one ? "" : "s")
                    + (argsUsage.isEmpty() ? "" : " (" + argsUsage + ")") + ", got " + args.size()
                    + (args.isEmpty() ? "" : ": " + String.join(" ", args)));
        }
    }
}

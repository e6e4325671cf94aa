package io.loopcsi.operator.kube;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A shell code block of README.md, as the words a shell would pass (single and double quotes
 * removed, one command per line, comments dropped): so a test runs the README's own commands.
 */
final class ReadmeRecipe {

    private ReadmeRecipe() {
    }

    /** The commands of the first code block after the paragraph that starts with {@code marker}. */
    static List<List<String>> after(String marker) throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int at = readme.indexOf(marker);
        if (at < 0) {
            throw new AssertionError("README.md has no paragraph starting \"" + marker + "\"");
        }
        int open = readme.indexOf("\n```\n", at);
        int close = readme.indexOf("\n```\n", open + 5);
        List<List<String>> commands = new ArrayList<>();
        for (String line : readme.substring(open + 5, close + 1).split("\n")) {
            List<String> words = words(line);
            if (!words.isEmpty()) {
                commands.add(words);
            }
        }
        return commands;
    }

    /** A line split as a shell splits it (quotes, a trailing # comment); no variables or substitutions. */
    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder w = null;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    w.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                w = w == null ? new StringBuilder() : w;
            } else if (Character.isWhitespace(c)) {
                if (w != null) {
                    words.add(w.toString());
                    w = null;
                }
            } else if (c == '#' && w == null) {
                break;
            } else {
                w = w == null ? new StringBuilder() : w;
                w.append(c);
            }
        }
        if (w != null) {
            words.add(w.toString());
        }
        return words;
    }
}

package io.loopcsi.operator.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The README's OLM recipes without a server (OlmBundleKubeTest runs them on one): the words a
 * shell passes, and every file or directory they apply or wait on exists in the repository.
 */
class ReadmeRecipeTest {

    @Test
    void aLineSplitsAsAShellSplitsIt() {
        assertEquals(List.of("kubectl", "wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/x"),
                ReadmeRecipe.words("kubectl wait --for=jsonpath='{.status.phase}'=Succeeded csv/x   # a comment"));
        assertEquals(List.of("kubectl", "patch", "-p", "{\"spec\":{\"approved\":true}}"),
                ReadmeRecipe.words("kubectl patch -p '{\"spec\":{\"approved\":true}}'"));
    }

    @Test
    void everyFileTheOlmRecipesApplyExists() throws IOException {
        for (String recipe : List.of(OlmBundleKubeTest.RECIPE, "With a registry (the OperatorHub way)")) {
            List<List<String>> commands = ReadmeRecipe.after(recipe);
            assertTrue(commands.size() >= 6, recipe + ": " + commands);
            for (List<String> c : commands) {
                for (int i = 1; i < c.size(); i++) {
                    if (c.get(i - 1).equals("-f")) {
                        assertTrue(Files.exists(Path.of(c.get(i))), recipe + ": " + c.get(i) + " exists");
                    }
                }
            }
        }
    }
}

package io.loopcsi.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * {@code loopcsi --version} and {@code loopcsi csc --version}: the driver's version, the CSI spec
 * it implements, the Quarkus and JDK it runs on and the commit it was built from. The build writes
 * version.properties (pom.xml: a filtered resource, the commit from git-commit-id-maven-plugin);
 * plain Java, so that csc (no Quarkus on its class path) prints the same.
 */
public final class Version {

    /** The CSI spec of proto/csi.proto (its first line; VersionTest keeps them equal). */
    public static final String CSI_SPEC = "1.12.0";

    private static final String RESOURCE = "/io/loopcsi/version.properties";

    private Version() {
    }

    /** The lines --version prints. */
    public static String text() {
        Properties p = new Properties();
        try (InputStream in = Version.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // every value below says "unknown"
        }
        String commit = built(p, "commit");
        if (!commit.equals("unknown") && "true".equals(built(p, "dirty"))) {
            commit += " (with uncommitted changes)";
        }
        return "loopcsi " + built(p, "version") + "\n"
                + "CSI spec " + CSI_SPEC + "\n"
                + "Quarkus " + built(p, "quarkus") + "\n"
                + "JDK " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ", "
                + System.getProperty("java.vendor") + ")\n"
                + "runtime " + runtime() + "\n"
                + "commit " + commit + "\n";
    }

    /**
     * "native" in the native executable (`make native`), "JVM" otherwise: the two differ in memory and
     * metrics. GraalVM sets this property in a native executable (org.graalvm.nativeimage.ImageInfo's
     * key, read directly: csc has no GraalVM or Quarkus class on its class path).
     */
    public static String runtime() {
        return "runtime".equals(System.getProperty("org.graalvm.nativeimage.imagecode")) ? "native" : "JVM";
    }

    /** A value the build filled in; "unknown" when it could not (e.g. a build outside a git clone). */
    private static String built(Properties p, String key) {
        String v = p.getProperty(key, "").strip();
        return v.isEmpty() || v.startsWith("${") ? "unknown" : v;
    }
}

package io.loopcsi.cli.doctor;

/**
 * One line of {@code loopcsi doctor}: what was checked, the verdict, what was found, and (for
 * anything but ok) what to do about it.
 */
public record Finding(String check, Verdict verdict, String detail, String fix) {

    /** ok: fine; warn: works, with a cost the detail names; fail: cannot host a pool; skip: does not apply here. */
    public enum Verdict {
        ok, warn, fail, skip
    }

    public static Finding ok(String check, String detail) {
        return new Finding(check, Verdict.ok, detail, "");
    }

    public static Finding warn(String check, String detail, String fix) {
        return new Finding(check, Verdict.warn, detail, fix);
    }

    public static Finding fail(String check, String detail, String fix) {
        return new Finding(check, Verdict.fail, detail, fix);
    }

    public static Finding skip(String check, String detail) {
        return new Finding(check, Verdict.skip, detail, "");
    }
}

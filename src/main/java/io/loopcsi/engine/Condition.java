package io.loopcsi.engine;

/** A volume's health as CSI's VolumeCondition reports it. */
public record Condition(boolean abnormal, String message) {

    public static final Condition HEALTHY = new Condition(false, "volume is healthy");

    /** Healthy, with something the user may want to know (e.g. that direct I/O fell back to buffered I/O). */
    public static Condition healthy(String note) {
        return new Condition(false, HEALTHY.message() + "; " + note);
    }

    public static Condition abnormal(String message) {
        return new Condition(true, message);
    }
}

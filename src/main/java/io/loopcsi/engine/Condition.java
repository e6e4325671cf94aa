package io.loopcsi.engine;

/** A volume's health as CSI's VolumeCondition reports it. */
public record Condition(boolean abnormal, String message) {

    public static final Condition HEALTHY = new Condition(false, "volume is healthy");

    public static Condition abnormal(String message) {
        return new Condition(true, message);
    }
}

package io.loopcsi.handoff;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What every node answer has: the phase, the gRPC code and message of the node's last answer and
 * the spec generation it answers. The kinds' CRDs describe these fields differently (LoopSnapshot's
 * not at all), so a kind that describes them does so on an overriding getter: the generated CRDs
 * stay as they were.
 */
@RegisterForReflection
public abstract class HandoffStatus {

    private String phase;
    private String code;
    private String message;
    private Long observedGeneration;

    /** True when this answers the given generation (success or failure; Pending is no answer). */
    public boolean answers(Long generation) {
        return observedGeneration != null && observedGeneration.equals(generation) && phase != null && !Phase.PENDING.equals(phase);
    }

    public String getPhase() {
        return phase;
    }

    public void setPhase(String phase) {
        this.phase = phase;
    }

    public String getCode() {
        return code;
    }

    public void setCode(String code) {
        this.code = code;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }
}

package io.loopcsi.handoff;

import io.fabric8.generator.annotation.Required;
import io.quarkus.runtime.annotations.RegisterForReflection;

@RegisterForReflection
public class LoopPoolNodeSpec {

    @Required
    private String pool;
    private String driver;
    @Required
    private String node;

    public LoopPoolNodeSpec() {
    }

    public LoopPoolNodeSpec(String pool, String driver, String node) {
        this.pool = pool;
        this.driver = driver;
        this.node = node;
    }

    public String getPool() {
        return pool;
    }

    public void setPool(String pool) {
        this.pool = pool;
    }

    public String getDriver() {
        return driver;
    }

    public void setDriver(String driver) {
        this.driver = driver;
    }

    public String getNode() {
        return node;
    }

    public void setNode(String node) {
        this.node = node;
    }
}

package io.loopcsi.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;

/** What the operator rolls out for watching the pool, beyond its metrics Service (ServiceMonitor and alerts come with their CRDs). */
public class Monitoring {

    @JsonPropertyDescription("Ship the pool's Grafana dashboard as a ConfigMap labelled grafana_dashboard=\"1\" in the operator's namespace,"
            + " for Grafana's dashboard sidecar (its variables default to this pool); false removes it. Default false.")
    @Default("false")
    private boolean grafanaDashboard;

    public boolean isGrafanaDashboard() {
        return grafanaDashboard;
    }

    public void setGrafanaDashboard(boolean grafanaDashboard) {
        this.grafanaDashboard = grafanaDashboard;
    }
}

package io.loopcsi.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OperatorSettingsTest {

    @AfterEach
    void clear() {
        System.clearProperty(OperatorSettings.RECHECK_PROPERTY);
        System.clearProperty(OperatorSettings.NODE_REPORT_FRESH_PROPERTY);
    }

    @Test
    void theTimingsAreTheDefaultsUnlessAPropertyShortensThem() {
        assertEquals(Duration.ofSeconds(30), OperatorSettings.recheck());
        assertEquals(Duration.ofSeconds(60), OperatorSettings.nodeReportFresh());
        System.setProperty(OperatorSettings.RECHECK_PROPERTY, "3s");
        System.setProperty(OperatorSettings.NODE_REPORT_FRESH_PROPERTY, "2m");
        assertEquals(Duration.ofSeconds(3), OperatorSettings.recheck());
        assertEquals(Duration.ofMinutes(2), OperatorSettings.nodeReportFresh());
    }

    @Test
    void aValueThatIsNoPositiveDurationIsRefusedNamingTheProperty() {
        for (String bad : new String[] { "soon", "0s", "-5s", "30" }) {
            System.setProperty(OperatorSettings.RECHECK_PROPERTY, bad);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, OperatorSettings::recheck, bad);
            assertTrue(e.getMessage().startsWith("loopcsi.operator.recheck=" + bad + ": "), e.getMessage());
        }
    }
}

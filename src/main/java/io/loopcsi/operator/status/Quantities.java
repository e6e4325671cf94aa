package io.loopcsi.operator.status;

import java.math.BigDecimal;

import io.fabric8.kubernetes.api.model.Quantity;

/** Byte counts as the short binary quantities people read in `kubectl get` (20Gi, 1536Mi). */
public final class Quantities {

    private static final String[] UNITS = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };

    private Quantities() {
    }

    public static long bytes(String quantity) {
        return Quantity.getAmountInBytes(new Quantity(quantity)).setScale(0, java.math.RoundingMode.CEILING).longValueExact();
    }

    public static String format(long bytes) {
        if (bytes == 0) {
            return "0";
        }
        int u = 0;
        BigDecimal v = BigDecimal.valueOf(bytes);
        BigDecimal k = BigDecimal.valueOf(1024);
        while (u < UNITS.length - 1 && v.remainder(k).signum() == 0 && v.compareTo(k) >= 0) {
            v = v.divide(k);
            u++;
        }
        return v.toPlainString() + UNITS[u];
    }
}

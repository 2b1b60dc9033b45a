package flinkfsm.testjob;

import org.apache.flink.api.java.functions.KeySelector;

/** The key of n is n mod keys, so that record n's count is known without the job: n / keys + 1. */
final class KeyOf implements KeySelector<Long, Integer> {
    private static final long serialVersionUID = 1L;
    private final int keys;

    KeyOf(int keys) {
        if (keys < 1) {
            throw new IllegalArgumentException("--keys must be at least 1");
        }
        this.keys = keys;
    }

    @Override
    public Integer getKey(Long n) {
        return (int) (n % keys);
    }
}

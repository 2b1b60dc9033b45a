package flinkfsm.testjob;

import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * The stateful streaming job the real-Flink tests run (issue 56), built from one source for Flink
 * 1.20 and 2.x.
 *
 * <p>A source emits 0, 1, 2, ... with its position in operator state; a keyed counter counts per key
 * (n mod keys) in keyed state and appends {@code n key count} to a file of its own. Since the key of n
 * is n mod keys, the count of record n is always n / keys + 1: every line checks, by itself, that the
 * source's position and the counters' state were saved and restored together. The counter also writes,
 * at every checkpoint and savepoint, the highest n it has seen (a value all its subtasks share through
 * union state), so the snapshot's source position is known: a job restored from snapshot c must start
 * at exactly 1 + that value. See README.md for what a test can and cannot conclude.
 *
 * <p>Arguments: {@code --out DIR} (required), {@code --keys K} (8), {@code --rate R} records a second
 * (100; 0 is as fast as it goes), {@code --work-millis W} per record in the counter (0), and
 * {@code --variant normal|incompatible-uid|incompatible-state|throttled}.
 */
public final class TestJob {
    public static final String SOURCE_UID = "flinkfsm-sequence-source";
    public static final String COUNTER_UID = "flinkfsm-keyed-counter";
    public static final String SINK_UID = "flinkfsm-discard";

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = parse(argv);
        String out = args.get("out");
        if (out == null || out.isEmpty()) {
            throw new IllegalArgumentException("--out DIR is required: where the counter writes its lines");
        }
        String variant = args.getOrDefault("variant", "normal");
        int keys = Integer.parseInt(args.getOrDefault("keys", "8"));
        double rate = Double.parseDouble(args.getOrDefault("rate", "100"));
        long workMillis = Long.parseLong(args.getOrDefault("work-millis", "0"));

        String counterUid = COUNTER_UID;
        boolean countAsText = false;
        switch (variant) {
            case "normal":
                break;
            case "incompatible-uid":
                // The normal job's counter state has no operator to go to: the restore fails when the
                // JobMaster starts ("Cannot map checkpoint/savepoint state"), unless
                // allowNonRestoredState drops that state.
                counterUid = COUNTER_UID + "-v2";
                break;
            case "incompatible-state":
                // Same uid, same state name, another type: the restore fails when the counter's task
                // opens its state (a StateMigrationException), and the job restarts as its restart
                // strategy says.
                countAsText = true;
                break;
            case "throttled":
                // Each record costs the counter time, far more than the source's rate allows, so the
                // source is backpressured: what the autoscaler must see. The excess is large because
                // the buffers between a source and a counter on one TaskManager hold thousands of
                // records (a local channel's consumer reads a buffer while it fills), which a small
                // excess would take minutes to fill.
                if (!args.containsKey("work-millis")) {
                    workMillis = 20;
                }
                if (!args.containsKey("rate")) {
                    rate = 2000;
                }
                break;
            default:
                throw new IllegalArgumentException("unknown --variant " + variant);
        }

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<Long> numbers =
                env.fromSource(new SequenceSource(rate), WatermarkStrategy.noWatermarks(), "sequence")
                        .uid(SOURCE_UID)
                        .setParallelism(1);
        numbers.keyBy(new KeyOf(keys))
                .process(new KeyedCounter(out, keys, workMillis, countAsText))
                .uid(counterUid)
                .name("keyed-counter")
                .sinkTo(new DiscardingSink<>())
                .uid(SINK_UID)
                .name("discard");
        env.execute("flinkfsm-test-job " + variant);
    }

    static Map<String, String> parse(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String key = a.substring(2);
            int eq = key.indexOf('=');
            if (eq >= 0) {
                args.put(key.substring(0, eq), key.substring(eq + 1));
            } else if (i + 1 < argv.length) {
                args.put(key, argv[++i]);
            } else {
                throw new IllegalArgumentException("no value for " + a);
            }
        }
        return args;
    }

    private TestJob() {}
}

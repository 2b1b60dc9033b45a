package flinkfsm.testjob;

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Counts records per key in keyed state and writes one line per record, {@code n key count}, to
 * {@code <out>/<job id>/out-<subtask>-<attempt>.txt}, flushed at once so a test can read it while the
 * job runs. At each snapshot (checkpoint or savepoint) it writes {@code <checkpoint id> <highest n>} to
 * {@code snap-<subtask>-<attempt>.txt}: the highest n any subtask has seen, shared through union
 * operator state, so the largest value written for one checkpoint id over all subtasks is the last
 * number the source emitted before that snapshot's barrier.
 *
 * <p>The lines themselves are not part of any snapshot: records processed after a snapshot and before
 * the job stopped are written again by a job restored from it (the output is at-least-once; the state
 * is exactly-once).
 */
final class KeyedCounter extends KeyedProcessFunction<Integer, Long, Long> implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;

    private final String out;
    private final int keys;
    private final long workMillis;
    private final boolean countAsText;

    private transient ValueState<Long> count;
    private transient ValueState<String> countText;
    private transient ListState<Long> highestSeenState;
    private transient long highestSeen = -1;
    private transient Writer lines;
    private transient Writer snapshots;

    KeyedCounter(String out, int keys, long workMillis, boolean countAsText) {
        this.out = out;
        this.keys = keys;
        this.workMillis = workMillis;
        this.countAsText = countAsText;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        highestSeenState = context.getOperatorStateStore()
                .getUnionListState(new ListStateDescriptor<>("highest-seen", Long.class));
        for (Long v : highestSeenState.get()) {
            highestSeen = Math.max(highestSeen, v);
        }
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        if (countAsText) {
            countText = getRuntimeContext().getState(new ValueStateDescriptor<>("count", String.class));
        } else {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        }
        File dir = new File(out, getRuntimeContext().getJobInfo().getJobId().toString());
        if (!dir.isDirectory() && !dir.mkdirs() && !dir.isDirectory()) {
            throw new IOException("cannot create " + dir);
        }
        String suffix = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + "-"
                + getRuntimeContext().getTaskInfo().getAttemptNumber() + ".txt";
        lines = writer(new File(dir, "out-" + suffix));
        snapshots = writer(new File(dir, "snap-" + suffix));
    }

    private static Writer writer(File f) throws IOException {
        return new BufferedWriter(new OutputStreamWriter(new FileOutputStream(f, true), StandardCharsets.UTF_8));
    }

    @Override
    public void processElement(Long n, Context ctx, Collector<Long> collector) throws Exception {
        if (workMillis > 0) {
            Thread.sleep(workMillis);
        }
        long c;
        if (countAsText) {
            String prev = countText.value();
            c = (prev == null ? 0 : Long.parseLong(prev)) + 1;
            countText.update(Long.toString(c));
        } else {
            Long prev = count.value();
            c = (prev == null ? 0 : prev) + 1;
            count.update(c);
        }
        highestSeen = Math.max(highestSeen, n);
        lines.write(n + " " + ctx.getCurrentKey() + " " + c + "\n");
        lines.flush();
        collector.collect(n);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        highestSeenState.update(java.util.Collections.singletonList(highestSeen));
        if (snapshots != null) {
            snapshots.write(context.getCheckpointId() + " " + highestSeen + "\n");
            snapshots.flush();
        }
    }

    @Override
    public void close() throws Exception {
        if (lines != null) {
            lines.close();
        }
        if (snapshots != null) {
            snapshots.close();
        }
    }
}

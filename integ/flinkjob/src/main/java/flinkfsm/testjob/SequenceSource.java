package flinkfsm.testjob;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * An unbounded source of 0, 1, 2, ... at a given rate, as one split whose next number is what the
 * reader's state holds: restored, it goes on from exactly where its snapshot was taken. It uses the
 * Source API (FLIP-27) because the older SourceFunction is gone from Flink 2.
 */
final class SequenceSource implements Source<Long, SequenceSource.Split, Long> {
    private static final long serialVersionUID = 1L;
    /** What the enumerator holds once the one split has gone to a reader. */
    static final long ASSIGNED = -1;

    private final double ratePerSecond;

    SequenceSource(double ratePerSecond) {
        this.ratePerSecond = ratePerSecond;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SourceReader<Long, Split> createReader(SourceReaderContext context) {
        return new SequenceReader(ratePerSecond);
    }

    @Override
    public SplitEnumerator<Split, Long> createEnumerator(SplitEnumeratorContext<Split> context) {
        return new Enumerator(context, 0);
    }

    @Override
    public SplitEnumerator<Split, Long> restoreEnumerator(SplitEnumeratorContext<Split> context, Long pending) {
        return new Enumerator(context, pending);
    }

    @Override
    public SimpleVersionedSerializer<Split> getSplitSerializer() {
        return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<Long> getEnumeratorCheckpointSerializer() {
        return new PendingSerializer();
    }

    /** The sequence from next on. */
    static final class Split implements SourceSplit {
        final long next;

        Split(long next) {
            this.next = next;
        }

        @Override
        public String splitId() {
            return "sequence";
        }
    }

    /**
     * Hands the one split to the first reader, and takes it back when that reader fails. Its state is
     * the split's position while no reader has it, or ASSIGNED: a reader's own state then holds it.
     */
    static final class Enumerator implements SplitEnumerator<Split, Long> {
        private final SplitEnumeratorContext<Split> context;
        private long pending;

        Enumerator(SplitEnumeratorContext<Split> context, long pending) {
            this.context = context;
            this.pending = pending;
        }

        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtask, String host) {}

        @Override
        public void addSplitsBack(List<Split> splits, int subtask) {
            for (Split s : splits) {
                pending = s.next;
            }
            assign();
        }

        @Override
        public void addReader(int subtask) {
            assign();
        }

        private void assign() {
            if (pending == ASSIGNED) {
                return;
            }
            Integer reader = context.registeredReaders().keySet().stream().min(Integer::compare).orElse(null);
            if (reader == null) {
                return;
            }
            context.assignSplit(new Split(pending), reader);
            pending = ASSIGNED;
        }

        @Override
        public Long snapshotState(long checkpointId) {
            return pending;
        }

        @Override
        public void close() {}
    }

    static final class SplitSerializer implements SimpleVersionedSerializer<Split> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Split split) throws IOException {
            return longBytes(split.next);
        }

        @Override
        public Split deserialize(int version, byte[] bytes) throws IOException {
            return new Split(bytesLong(bytes));
        }
    }

    static final class PendingSerializer implements SimpleVersionedSerializer<Long> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Long pending) throws IOException {
            return longBytes(pending);
        }

        @Override
        public Long deserialize(int version, byte[] bytes) throws IOException {
            return bytesLong(bytes);
        }
    }

    static byte[] longBytes(long v) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream(8);
        try (DataOutputStream out = new DataOutputStream(b)) {
            out.writeLong(v);
        }
        return b.toByteArray();
    }

    static long bytesLong(byte[] bytes) throws IOException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return in.readLong();
        }
    }

    static List<Split> one(long next) {
        List<Split> l = new ArrayList<>(1);
        l.add(new Split(next));
        return l;
    }
}

package flinkfsm.testjob;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.core.io.InputStatus;

/**
 * Emits the split's numbers in order, no faster than the rate. Between two numbers it reports nothing
 * available and wakes itself on a timer, so a slow rate is idle time, not busy time, in Flink's
 * metrics. Its state is the next number: snapshots happen between two calls to pollNext, so the
 * snapshot holds exactly the numbers emitted before its barrier.
 */
final class SequenceReader implements SourceReader<Long, SequenceSource.Split> {
    private final long nanosPerRecord;
    private final ScheduledExecutorService timer;
    /** The next number to emit, or -1 while the reader has no split. */
    private long next = -1;
    private long dueNanos;
    private CompletableFuture<Void> available = new CompletableFuture<>();

    SequenceReader(double ratePerSecond) {
        this.nanosPerRecord = ratePerSecond > 0 ? (long) (1_000_000_000L / ratePerSecond) : 0;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "flinkfsm-sequence-timer");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void start() {
        dueNanos = System.nanoTime();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<Long> output) {
        if (next < 0) {
            return InputStatus.NOTHING_AVAILABLE;
        }
        long now = System.nanoTime();
        if (nanosPerRecord > 0 && now < dueNanos) {
            wakeAt(dueNanos - now);
            return InputStatus.NOTHING_AVAILABLE;
        }
        output.collect(next++);
        if (nanosPerRecord > 0) {
            // After a long pause (backpressure, a slow checkpoint) it does not burst to catch up.
            dueNanos = Math.max(dueNanos + nanosPerRecord, now - 10 * nanosPerRecord);
        }
        return InputStatus.MORE_AVAILABLE;
    }

    private synchronized void wakeAt(long delayNanos) {
        if (available.isDone()) {
            available = new CompletableFuture<>();
        }
        CompletableFuture<Void> f = available;
        timer.schedule(() -> f.complete(null), delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public synchronized CompletableFuture<Void> isAvailable() {
        return available;
    }

    @Override
    public List<SequenceSource.Split> snapshotState(long checkpointId) {
        return next < 0 ? Collections.emptyList() : SequenceSource.one(next);
    }

    @Override
    public synchronized void addSplits(List<SequenceSource.Split> splits) {
        for (SequenceSource.Split s : splits) {
            next = s.next;
        }
        available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {}

    @Override
    public void close() {
        timer.shutdownNow();
    }
}

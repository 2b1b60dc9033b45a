#!/usr/bin/env python3
"""When a bench window's slow passes came, and what the machine was doing then.

Needs a run with the operator's -set slowPassLog=50ms (one log line per pass over 50 ms), Go's
GODEBUG=gctrace=1 in make bench's environment (every process of the local cluster inherits it and
logs each collection) and hack/cpu-sampler.py beside it. Usage:

    python3 hack/slow-seconds.py /tmp/bench-10k-RUN /tmp/bench-10k-RUN.log /tmp/cpu-RUN.txt

For each steady window: how many passes took over 50 ms; for the API server, the operator and the
simulator (the bench's process), how much of the window a collector's mark phase was on and how
many of the slow passes overlapped one; how slow passes per second go with each process's CPU;
and the busiest seconds.
"""
import re, sys, collections, datetime, glob, statistics
D, LOG, CPU = sys.argv[1:4]
cpu = [l.split() for l in open(CPU)]
starts = {}
samples = []
for f in cpu:
    if f[0] == 'start':
        starts[f[1]] = (f[2], float(f[3])); continue
    t = float(f[0]); procs = {}
    head = ' '.join(f).split('total:')
    for x in head[0].split()[1:]:
        name, pid, ticks = x.split(':')
        name = 'flinkfsm' if name.startswith('flinkfsm') else name  # a variant's binary has its own name
        procs[name] = procs.get(name, 0) + int(ticks)
    tot = [int(v) for v in head[1].split()]
    samples.append((t, procs, tot))
def per_second():
    out = []
    for (t0, p0, c0), (t1, p1, c1) in zip(samples, samples[1:]):
        dt = t1 - t0
        row = {k: (p1.get(k, 0) - p0.get(k, 0)) / 100 / dt for k in p1 if k in p0}
        tot = sum(c1) - sum(c0); idle = (c1[3] + c1[4]) - (c0[3] + c0[4])
        row['machine'] = 2 * (tot - idle) / tot if tot else 0
        out.append((t0, t1, row))
    return out
secs = per_second()
bench_start = [v[1] for v in starts.values() if v[0] == 'bench'][0]
# windows from the bench log
wins = []
for l in open(LOG):
    m = re.match(r'\[bench +([\d.]+)s\] \(c\) letting the applications settle for (\d+)m0s, then measuring for (\d+)m0s', l)
    if m:
        t = bench_start + float(m.group(1)); wins.append([t + 60 * int(m.group(2)), t + 60 * (int(m.group(2)) + int(m.group(3)))])
# gc marks: (proc, start, end)
marks = []
def gcs(path, start, name):
    for l in open(path, errors='replace'):
        m = re.search(r'gc \d+ @([\d.]+)s \d+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock', l)
        if m:
            s = start + float(m.group(1)); marks.append((name, s, s + (float(m.group(2)) + float(m.group(3)) + float(m.group(4))) / 1000))
api = [v for v in starts.values() if v[0] == 'kube-apiserver']
gcs(D + '/env/cluster/logs/kube-apiserver.log', api[0][1], 'apiserver')
gcs(LOG, bench_start, 'sim')
# operator: one log may hold several processes; split on gc counter reset
ops = sorted(v[1] for v in starts.values() if v[0].startswith('flinkfsm'))
slow = []
for path in sorted(glob.glob(D + '/env/logs/operator*.log')):
    idx = -1; last = 1e18
    for l in open(path, errors='replace'):
        m = re.search(r'gc (\d+) @([\d.]+)s \d+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock', l)
        if m:
            n = int(m.group(1))
            if n < last: idx += 1
            last = n
            st = ops[min(idx, len(ops) - 1)] + float(m.group(2))
            marks.append(('operator', st, st + (float(m.group(3)) + float(m.group(4)) + float(m.group(5))) / 1000)); continue
        m = re.match(r'I(\d\d)(\d\d) (\d\d):(\d\d):([\d.]+) .*"slow pass".*tookMs=(\d+) waitedMs=(\d+)', l)
        if m:
            t = datetime.datetime(2026, int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), tzinfo=datetime.timezone.utc).timestamp() + float(m.group(5))
            slow.append((t, int(m.group(6)), int(m.group(7))))
print('windows', [(datetime.datetime.utcfromtimestamp(a).strftime('%H:%M:%S'), datetime.datetime.utcfromtimestamp(b).strftime('%H:%M:%S')) for a, b in wins])
for wi, (a, b) in enumerate(wins):
    ss = [s for s in slow if a <= s[0] < b]
    w = [x for x in secs if a <= x[0] < b]
    print('\n== window %d: %d slow passes (>50ms), %d s' % (wi, len(ss), len(w)))
    for proc in ('apiserver', 'operator', 'sim'):
        mk = [(s, e) for n, s, e in marks if n == proc and e >= a and s < b]
        active = sum(min(e, b) - max(s, a) for s, e in mk)
        inside = sum(1 for t, took, _ in ss if any(s - 0.001 * took <= t and t - 0.001 * took <= e for s, e in mk))
        print('  %-9s %3d marks, mark active %5.1f%% of the time; slow passes overlapping a mark %5.1f%%; mean mark %.0f ms' % (
            proc, len(mk), 100 * active / (b - a), 100 * inside / max(1, len(ss)), 1000 * active / max(1, len(mk))))
    allmk = [(s, e) for n, s, e in marks if e >= a and s < b]
    outside = sum(1 for t, took, _ in ss if not any(s - 0.001 * took <= t and t - 0.001 * took <= e for s, e in allmk))
    union, end = 0.0, a
    for s0, e0 in sorted((max(s, a), min(e, b)) for s, e in allmk):
        if e0 > end:
            union += e0 - max(s0, end); end = e0
    print('  some collector marking %.1f%% of the time; slow passes overlapping none: %.1f%%' % (100 * union / (b - a), 100 * outside / max(1, len(ss))))
    bysec = collections.Counter(int(t) for t, _, _ in ss)
    rows = [(bysec.get(int(t0), 0), t0, r) for t0, _, r in w]
    # correlation of slow count with machine and procs
    ys = [bysec.get(int(t0), 0) for t0, _, _ in w]
    for k in ('machine', 'kube-apiserver', 'flinkfsm', 'bench', 'etcd', 'kube-controller', 'kwok'):
        xs = [r.get(k, 0) for _, _, r in w]
        if len(set(xs)) > 1 and len(set(ys)) > 1:
            print('  corr(slow/s, %s cpu) = %.2f  mean %.2f  p90 %.2f' % (k, statistics.correlation(xs, ys), statistics.mean(xs), sorted(xs)[int(.9 * len(xs))]))
    busy = sorted(rows, key=lambda x: -x[0])[:12]
    print('  busiest seconds: slow | machine api op sim etcd kcm kwok | marks')
    for n, t0, r in busy:
        act = sorted(set(p for p, s, e in marks if s <= t0 + 1 and e >= t0))
        print('   %s %3d | %.2f %.2f %.2f %.2f %.2f %.2f %.2f | %s' % (datetime.datetime.utcfromtimestamp(t0).strftime('%H:%M:%S'), n, r['machine'], r.get('kube-apiserver', 0),
              r.get('flinkfsm', 0), r.get('bench', 0), r.get('etcd', 0), r.get('kube-controller', 0), r.get('kwok', 0), ','.join(act)))
    sec_counts = sorted(ys, reverse=True); tot = sum(ys)
    print('  slow passes in the busiest 1%% of seconds: %.0f%%; 5%%: %.0f%%' % (100 * sum(sec_counts[:max(1, len(ys) // 100)]) / max(1, tot), 100 * sum(sec_counts[:max(1, len(ys) // 20)]) / max(1, tot)))

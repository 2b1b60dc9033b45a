#!/usr/bin/env python3
"""Samples each local-cluster process's CPU once a second, for hack/slow-seconds.py.

A bench window's figures are totals; the slow passes come in bursts of seconds. Run beside make
bench (it reads /proc only, about 1% of a core):

    nohup python3 hack/cpu-sampler.py /tmp/cpu-RUN.txt &

Each line is the time, then NAME:PID:TICKS (user+system clock ticks so far) for every process
whose name is one of the cluster's, the operator's or the bench's, then total: and /proc/stat's
first line. A process seen for the first time gets a line "start PID NAME EPOCH", its start time,
which places its Go runtime's gctrace lines (seconds since the process started) on the clock.
"""
import os, time, sys
names = ('kube-apiserver', 'etcd', 'kube-controller', 'kube-scheduler', 'kwok', 'flinkfsm', 'bench')
out = open(sys.argv[1], 'a', buffering=1)
btime = [int(l.split()[1]) for l in open('/proc/stat') if l.startswith('btime')][0]
seen = set()
while True:
    t = time.time()
    rows = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            with open('/proc/%s/stat' % pid) as f: s = f.read()
        except OSError: continue
        comm = s[s.index('(')+1:s.rindex(')')]
        if comm not in names: continue
        f = s[s.rindex(')')+2:].split()
        if pid not in seen:
            seen.add(pid)
            out.write('start %s %s %.2f\n' % (pid, comm, btime + int(f[19]) / os.sysconf('SC_CLK_TCK')))
        rows.append('%s:%s:%d' % (comm, pid, int(f[11]) + int(f[12])))
    with open('/proc/stat') as f: cpu = f.readline().split()[1:]
    out.write('%.3f %s total:%s\n' % (t, ' '.join(rows), ' '.join(cpu)))
    time.sleep(max(0, 1 - (time.time() - t)))

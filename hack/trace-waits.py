#!/usr/bin/env python3
"""What the operator's slowest passes waited for, from a Go execution trace.

make bench -set profiling=true saves 5 s of the operator's execution trace in each steady window
(operator-trace*.out in the run's directory). Usage:

    go tool trace -d=parsed operator-trace.out > trace.txt
    python3 hack/trace-waits.py trace.txt

A pass is a worker's time from taking a key off the workqueue to waiting for the next (passes
taken back to back count as one). Each is split into running, waiting for a processor and blocked
(a Flink round trip, the API server, other). Passes that overlap a GC mark phase are counted apart.
Flink round trips are split into the simulator's part (request sent until its answer's bytes
reached the operator: the connection goroutine made runnable by the network poller) and the
operator's (that goroutine waiting for a processor, then the caller waiting for one).
"""
import collections
import re
import sys

TIME = re.compile(r'Time=(\d+)')
GOID = re.compile(r'GoID=(\d+)')
BY = re.compile(r' G=(-?\d+)')
REASON = re.compile(r'Reason="([^"]*)"')


def quantile(v, p):
    v = sorted(v)
    return v[int(p * (len(v) - 1))] if v else float('nan')


def blocked_on(stack, line):
    if 'workqueue' in stack and 'processNextWorkItem' in stack:
        return 'queue'
    if 'persistConn).roundTrip' in stack:
        return 'flink'
    if 'jobs.(*Pass).Together' in stack:
        # The pass waits for the Flink calls it made at once (job details and checkpoints).
        return 'flink (calls made together)'
    if 'k8s.io/client-go/rest' in stack or 'http2' in stack:
        return 'kube'
    r = REASON.search(line)
    return 'other:' + (r.group(1) if r else '')


def main(path):
    marking = False
    marks, mark_start = [], None
    workers, in_pass, passes = set(), {}, []
    readloops, net_ready, readloop_ran = set(), {}, {}
    trip_start, trips, waiting_caller = {}, [], {}
    pending, stack = None, []

    def end_block(g, t, line, st):
        kind = blocked_on(st, line)
        if 'persistConn).roundTrip' in st and 'Reason="select"' in line:
            trip_start[g] = t
        if 'persistConn).readLoop' in st and 'network' in line:
            readloops.add(g)
        if kind == 'queue':
            workers.add(g)
        p = in_pass.get(g)
        if p is None:
            return
        p['run'] += t - p['since']
        if kind == 'queue':
            p['end'] = t
            passes.append(p)
            del in_pass[g]
        else:
            p['blocked_on'], p['since'] = kind, t

    for line in open(path):
        if not line.startswith('M='):
            if pending is not None:
                stack.append(line)
            continue
        if pending is not None:
            end_block(*pending, ''.join(stack))
            pending = None
        if 'GC concurrent mark phase' in line:
            t = int(TIME.search(line).group(1))
            if 'RangeBegin' in line:
                marking, mark_start = True, t
            elif 'RangeActive' in line:
                # Each of the trace's generations restates the ranges still open: a mark phase
                # begun earlier in the trace goes on; one begun before it has no known start.
                if not marking:
                    marking, mark_start = True, None
            elif 'RangeEnd' in line:
                marking = False
                marks.append((t - mark_start) / 1e6 if mark_start else -1)
            continue
        if 'StateTransition' not in line or 'GoID=' not in line:
            continue
        t = int(TIME.search(line).group(1))
        g = GOID.search(line).group(1)
        if 'Running->Waiting' in line:
            pending, stack = (g, t, line), []
        elif 'Waiting->Runnable' in line:
            if g in readloops:
                net_ready[g] = t
            if g in trip_start:
                waiting_caller[g] = (trip_start.pop(g), t, BY.search(line).group(1), marking)
            p = in_pass.get(g)
            if p is not None:
                p['waits'][p['blocked_on']] += t - p['since']
                p['since'] = t
            elif g in workers:
                in_pass[g] = {'g': g, 'start': t, 'since': t, 'run': 0, 'runnable': 0, 'marking': marking,
                              'blocked_on': None, 'waits': collections.Counter()}
        elif 'Running->Runnable' in line:
            p = in_pass.get(g)
            if p is not None:
                p['run'] += t - p['since']
                p['since'] = t
        elif 'Runnable->Running' in line:
            if g in readloops and g in net_ready:
                readloop_ran[g] = (net_ready[g], t)
            if g in waiting_caller:
                start, woken, by, m = waiting_caller.pop(g)
                if by in readloop_ran and readloop_ran[by][0] >= start:
                    ready, ran = readloop_ran[by]
                    trips.append((start, ready, ran, woken, t, m))
            p = in_pass.get(g)
            if p is not None:
                p['runnable'] += t - p['since']
                p['since'] = t
                p['marking'] = p['marking'] or marking

    if marking:
        marks.append(None)

    def shown(m):
        if m is None:
            return 'one running at the end'
        return 'one begun before the trace' if m < 0 else '%.0f' % m
    print('mark phases (ms):', ', '.join(shown(m) for m in marks) or 'none')
    if not passes:
        print('no pass ended in the trace: no worker waited for work (the queue never emptied)')
        return
    for label, keep in (('all', lambda p: True), ('overlapping a mark', lambda p: p['marking']),
                        ('outside marks', lambda p: not p['marking'])):
        ms = [(p['end'] - p['start']) / 1e6 for p in passes if keep(p)]
        if ms:
            print('passes %-20s %6d  p50 %.1f  p90 %.1f  p99 %.1f ms  over 50 ms: %d' % (
                label, len(ms), quantile(ms, .5), quantile(ms, .9), quantile(ms, .99), sum(x > 50 for x in ms)))
    by_worker = collections.defaultdict(list)
    for p in passes:
        by_worker[p['g']].append(p)
    busy = span = 0
    for ps in by_worker.values():
        ps.sort(key=lambda p: p['start'])
        span += ps[-1]['end'] - ps[0]['start']
        busy += sum(p['end'] - p['start'] for p in ps)
    if span:
        print('workers waited for work %.0f%% of the time between their first and last pass (%d workers)' % (
            100 * (span - busy) / span, len(by_worker)))
    slow = [p for p in passes if (p['end'] - p['start']) / 1e6 > 50]
    if slow:
        total = collections.Counter()
        for p in slow:
            total['running'] += p['run']
            total['waiting for a processor'] += p['runnable']
            for k, v in p['waits'].items():
                total['blocked: ' + str(k)] += v
        print('passes over 50 ms, ms each on average:',
              ', '.join('%s %.1f' % (k, v / 1e6 / len(slow)) for k, v in total.most_common()))
    slow_trips = [r for r in trips if (r[4] - r[0]) / 1e6 > 30]
    if trips:
        print('Flink round trips %d, p99 %.1f ms; over 30 ms: %d' % (
            len(trips), quantile([(r[4] - r[0]) / 1e6 for r in trips], .99), len(slow_trips)))
    if slow_trips:
        n = len(slow_trips)
        print('  of those, ms on average: the simulator\'s part %.1f, the connection goroutine waiting '
              'for a processor %.1f, the caller waiting for one %.1f' % (
                  sum(r[1] - r[0] for r in slow_trips) / 1e6 / n, sum(r[2] - r[1] for r in slow_trips) / 1e6 / n,
                  sum(r[4] - r[3] for r in slow_trips) / 1e6 / n))


if __name__ == '__main__':
    main(sys.argv[1])

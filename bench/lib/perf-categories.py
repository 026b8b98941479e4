#!/usr/bin/env python3
"""On-CPU samples of a `perf record -g` of bench/lib/backfill-profile.ts, by variant and kind of work.

    python3 bench/lib/perf-categories.py /tmp/bf.data

A sample is charged to the variant whose function is on its stack (backfillExportFile and the
backfill's modules, or the hand loops), else to `shared` (stream and zlib callbacks run from the
event loop, where no variant's frame is below them); then to the first kind of work found from
the leaf up. Threads other than the main one are charged by what they run (libuv's pool: inflate).
"""
import collections
import subprocess
import sys


# Kinds of work, each with the frame names that mark it, in the order they are tried on a frame.
KINDS = [
    ('JSON.parse', ('JsonParse', 'JsonParser')),
    ('GC (main thread)', ('Heap::', 'Scavenge', 'MarkCompact')),
    ('md5', ('md5',)),
    ('util-dynamodb unmarshall', ('util-dynamodb',)),
    ('tidewater pipeline (parse, unmarshall, route, sink)', ('engine.js', 'records/', 'pipeline/')),
    ('record build', ('backfill-record',)),
    ('lines (split, decode, checks)', ('line-splitter', 'string_decoder', 'export-lines')),
    ('backfill loop', ('export-file', 'deliver-batch', 'file-batch')),
    ('hand loop body (split)', ('andLoop',)),
    ('node streams + zlib JS', ('node:zlib', 'streams/', 'node:stream')),
    ('S3 request/server', ('_http', 'node:net', 'smithy', 'aws-sdk', 'koa', 's3-server', 's3rver')),
]


def classify(frames):
    s = ' | '.join(frames)
    if 'PlatformWorkerThread' in s:
        return 'v8 background threads (GC, compiler)'
    if 'start_thread' in s:
        if ' worker' in ' ' + s:
            return 'pool: inflate' if 'inflate' in s else 'pool: other (fs)'
        return 'other thread'
    if 'backfillExportFile' in s or 'exportLine' in s or 'engine.js' in s:
        variant = 'backfill'
    elif 'andLoop' in s:
        variant = 'hand'
    else:
        variant = 'shared'
    for f in frames:  # leaf first
        for kind, marks in KINDS:
            if any(m in f for m in marks):
                return kind if kind.startswith('S3') else f'{variant}: {kind}'
    return variant + ': other'


def main():
    out = subprocess.run(['perf', 'script', '-i', sys.argv[1], '-F', 'tid,ip,sym'],
                         capture_output=True, text=True, check=True).stdout
    counts = collections.Counter()
    frames = []
    for line in out.split('\n') + ['']:
        if line.startswith(('\t', ' ')):
            parts = line.strip().split(None, 1)
            frames.append(parts[1] if len(parts) > 1 else '')
        elif frames:
            counts[classify(frames)] += 1
            frames = []
    total = sum(counts.values())
    for name, n in counts.most_common():
        print(f'{100 * n / total:5.1f}% {n:6d}  {name}')
    print(total, 'samples')


main()

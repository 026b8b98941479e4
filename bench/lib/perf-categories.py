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
        if 'JsonParse' in f or 'JsonParser' in f:
            return variant + ': JSON.parse'
        if 'Heap::' in f or 'Scavenge' in f or 'MarkCompact' in f:
            return variant + ': GC (main thread)'
        if 'md5' in f:
            return variant + ': md5'
        if 'util-dynamodb' in f:
            return variant + ': util-dynamodb unmarshall'
        if 'engine.js' in f or 'records/' in f or 'pipeline/' in f:
            return variant + ': tidewater pipeline (parse, unmarshall, route, sink)'
        if 'backfill-record' in f:
            return variant + ': record build'
        if 'line-splitter' in f or 'string_decoder' in f or 'export-lines' in f:
            return variant + ': lines (split, decode, checks)'
        if 'export-file' in f or 'deliver-batch' in f or 'file-batch' in f:
            return variant + ': backfill loop'
        if 'andLoop' in f:
            return variant + ': hand loop body (split)'
        if 'node:zlib' in f or 'streams/' in f or 'node:stream' in f:
            return variant + ': node streams + zlib JS'
        if any(k in f for k in ('_http', 'node:net', 'smithy', 'aws-sdk', 'koa', 's3-server', 's3rver')):
            return 'S3 request/server'
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

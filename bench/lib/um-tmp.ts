import { register } from 'node:module';
register('./use-dist.mjs', import.meta.url);
const { generateBatches } = await import('./events.js');
const { createRecordParser } = await import('../../src/records/parse.js');
const { convertImage, imageConversion } = await import('../../src/records/unmarshall.js');
const { exactNumber } = await import('../../src/records/numbers.js');
const hlm = await import('../peers/hand-loop.js');
const json = generateBatches(1, 100, 100).map((b) => JSON.stringify(b));
const parse = createRecordParser();
const cv = imageConversion(exactNumber);
const sink: unknown[] = [];
function tw(ev: any) { for (const raw of ev.Records) { const r = parse(raw); sink.push({ kind: r.kind, s: r.sequenceNumber, k: r.keys, n: r.newImage, o: r.oldImage }); } }
function twConv(ev: any) { for (const raw of ev.Records) { const d = raw.dynamodb; sink.push({ kind: raw.eventName, s: d.SequenceNumber, k: convertImage(d.Keys, cv), n: d.NewImage && convertImage(d.NewImage, cv), o: d.OldImage && convertImage(d.OldImage, cv) }); } }
function hl(ev: any) { for (const raw of ev.Records) { const d = raw.dynamodb; sink.push({ kind: raw.eventName, s: d.SequenceNumber, k: hlm.map(d.Keys), n: hlm.map(d.NewImage), o: hlm.map(d.OldImage) }); } }
const all: Record<string, (e: unknown) => void> = { tw, twConv, hl }; const only = process.argv[2]; const fns: Record<string, (e: unknown) => void> = only ? { [only]: all[only]! } : all;
const res: Record<string, number[]> = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
for (let round = 0; round < 30; round++) for (const k of Object.keys(fns)) { let us = 0; for (const j of json) { const ev = JSON.parse(j); const t = process.cpuUsage(); fns[k]!(ev); const u = process.cpuUsage(t); us += u.user + u.system; sink.length = 0; } res[k]!.push(us); }
for (const k of Object.keys(res)) { const m = res[k]!.slice(8).sort((a, b) => a - b); console.log(k.padEnd(8), 'median µs/record', (m[m.length >> 1]! / 10000).toFixed(2), 'min', (m[0]! / 10000).toFixed(2)); }

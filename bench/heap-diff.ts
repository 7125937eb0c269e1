/**
 * Compares two V8 heap snapshots (.heapsnapshot, e.g. from the soak's SOAK_HEAP_SNAPSHOTS=1):
 * objects counted and sized by constructor (node type + name), largest growth first.
 *   npx tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows=30]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

type Tally = Map<string, { count: number; bytes: number }>;

function tally(file: string): Tally {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const stride = fields.length;
  const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const out: Tally = new Map();
  for (let i = 0; i < snap.nodes.length; i += stride) {
    const type = types[snap.nodes[i + typeAt] as number] as string;
    // Strings and numbers by type only: their "name" is their content.
    const name = type === 'object' || type === 'closure' || type === 'native' ? `${type}:${snap.strings[snap.nodes[i + nameAt] as number]}` : type;
    const t = out.get(name) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += snap.nodes[i + sizeAt] as number;
    out.set(name, t);
  }
  return out;
}

const [beforeFile, afterFile, rowsArg] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  console.error('usage: tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]');
  process.exit(2);
}
const before = tally(beforeFile);
const after = tally(afterFile);
const rows = [...new Set([...before.keys(), ...after.keys()])].map((name) => {
  const b = before.get(name) ?? { count: 0, bytes: 0 };
  const a = after.get(name) ?? { count: 0, bytes: 0 };
  return {
    name: name.slice(0, 60),
    countBefore: b.count,
    countAfter: a.count,
    dCount: a.count - b.count,
    kbBefore: Math.round(b.bytes / 1024),
    kbAfter: Math.round(a.bytes / 1024),
    dKb: Math.round((a.bytes - b.bytes) / 1024),
  };
});
rows.sort((x, y) => y.dKb - x.dKb);
console.table(rows.slice(0, Number(rowsArg ?? 30)));
const total = (t: Tally) => [...t.values()].reduce((n, v) => n + v.bytes, 0) / 1024 / 1024;
console.log(`total self size: ${total(before).toFixed(1)} MB -> ${total(after).toFixed(1)} MB`);

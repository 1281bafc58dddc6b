// node dist/scripts/bench/heap-diff.js <before.heapsnapshot> <after.heapsnapshot> [per]
// What a heap grew by between two V8 heap snapshots, by kind of object (its constructor or, for
// closures, its function's name): count and bytes (self size), largest first; with `per`, divided by
// it (say, the number of subscribers added in between). The snapshots come from the memory probe
// (BENCH_HEAP_SNAPSHOTS=<dir> npm run bench:live, which takes one at each memory reading).
import { readFileSync } from "node:fs";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Bytes and count per "type name" of every node in the snapshot. */
function totals(file: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const name = type === "object" || type === "closure" ? snap.strings[snap.nodes[i + nameAt]!]! : "";
    const key = name ? `${type} ${name}` : type;
    const entry = out.get(key) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snap.nodes[i + sizeAt]!;
    out.set(key, entry);
  }
  return out;
}

function main(): void {
  const [beforeFile, afterFile, perArg] = process.argv.slice(2);
  if (!beforeFile || !afterFile) throw new Error("usage: heap-diff <before.heapsnapshot> <after.heapsnapshot> [per]");
  const per = Number(perArg ?? 1);
  const before = totals(beforeFile);
  const after = totals(afterFile);
  // Every kind in either snapshot: one found only before counts as shrunk to nothing.
  const none = { count: 0, bytes: 0 };
  const rows = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
    const a = after.get(key) ?? none;
    const b = before.get(key) ?? none;
    return { key, count: (a.count - b.count) / per, bytes: (a.bytes - b.bytes) / per };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  const total = rows.reduce((sum, r) => sum + r.bytes, 0);
  console.log(`grew by ${total.toFixed(0)} bytes${per === 1 ? "" : `, per one of ${per}`}`);
  for (const r of rows.slice(0, 25))
    console.log(`${r.bytes.toFixed(0).padStart(8)} B ${r.count.toFixed(2).padStart(8)}×  ${r.key}`);
}

main();

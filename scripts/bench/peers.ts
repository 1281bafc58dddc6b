// npm run bench:peers — the gateway next to established peers, in one run, each in its own process,
// the gateway on default settings: GraphQL `station(code)` against Mercurius with graphql-jit on
// Fastify (peers/graphql.ts), and milestone delivery on PostgreSQL against graphile-worker
// (peers/delivery.ts). BENCH_PEERS=graphql or =delivery runs one part.
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { startProcess } from "./harness";
import { deliveryRows } from "./peers/delivery";
import { graphqlRows } from "./peers/graphql";

const RECEIVER = path.resolve(__dirname, "receiver.js");

function commitOfTheRun(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" });
    return dirty === "" ? commit : `${commit} (with uncommitted changes)`;
  } catch {
    return "unknown";
  }
}

async function main(): Promise<void> {
  const parts = (process.env.BENCH_PEERS ?? "graphql,delivery").split(",");
  console.log(
    `bench:peers — ${new Date().toISOString()}, commit ${commitOfTheRun()}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}, ${os.cpus().length} cores`,
  );
  const summary: string[] = [];
  if (parts.includes("graphql")) summary.push(...(await graphqlRows()));
  if (parts.includes("delivery")) {
    const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
    try {
      summary.push(...(await deliveryRows(receiver.url)));
    } finally {
      receiver.child.kill("SIGTERM");
    }
  }
  console.log(`\nsummary (load at the end ${os.loadavg()[0]!.toFixed(2)}):`);
  for (const line of summary) console.log(`  ${line}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

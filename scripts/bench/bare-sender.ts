// The baseline for bench:delivery, as its own process: signs and POSTs the given notification bodies
// with undici at a fixed concurrency, as the delivery worker does for one origin, and prints the time
// it took and the CPU it used. Input (a JSON file): { url, secret, concurrency, deliveries: [{ id, payload }] }.
import { readFileSync } from "node:fs";
import { Pool } from "undici";
import { signWebhook } from "../../src/delivery/notification";

async function main(): Promise<void> {
  const { url, secret, concurrency, deliveries } = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as {
    url: string;
    secret: string;
    concurrency: number;
    deliveries: Array<{ id: string; payload: string }>;
  };
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: concurrency });
  let next = 0;
  let failed = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < deliveries.length) {
        const d = deliveries[next++]!;
        const ts = Math.floor(Date.now() / 1000);
        const res = await pool.request({
          method: "POST",
          path: target.pathname,
          body: d.payload,
          headers: {
            "content-type": "application/json",
            "webhook-id": d.id,
            "webhook-timestamp": String(ts),
            "webhook-signature": signWebhook(secret, d.id, ts, d.payload),
          },
        });
        await res.body.dump();
        if (res.statusCode >= 300) failed++;
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const spent = process.cpuUsage(cpu);
  const cpuMs = (spent.user + spent.system) / 1000;
  await pool.close();
  console.log(JSON.stringify({ msg: "bare sender done", url, elapsedMs, cpuMs, sent: deliveries.length, failed }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

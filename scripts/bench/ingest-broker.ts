// npm run bench:ingest-broker — carrier messages through RabbitMQ into stored milestones, next to the
// JSON REST ingestion of the same events, in the same run and the same gateway process (default
// settings, embedded database in memory, AMQP_URL set; its own process, as `npm start` runs it).
//   broker: BENCH_MESSAGES FSU messages (default 50,000), one DEP of its own AWB each — a carrier's
//           system publishes a status message as it happens — published with confirms to a queue of
//           this run's own; timed from the first publish until the gateway counts them all stored.
//   REST:   the same milestones as JSON (other AWBs, so nothing is a duplicate), POSTed in arrays of
//           BENCH_REST_BATCH events (default 100: what a carrier's system flushes at once) with
//           BENCH_REST_CONCURRENCY requests in flight (default 8); timed until the last 202.
// Prints events per second of each and their ratio (target: broker ≥ 0.5 × REST). Needs RabbitMQ at
// BENCH_AMQP_URL (default amqp://guest:guest@127.0.0.1:5672).
import path from "node:path";
import { connect } from "amqplib";
import { metricsOf, startGateway } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const AMQP_URL = process.env.BENCH_AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 50_000);
const REST_BATCH = Number(process.env.BENCH_REST_BATCH ?? 100);
const REST_CONCURRENCY = Number(process.env.BENCH_REST_CONCURRENCY ?? 8);
const API_KEY = "cgw_bench-ingest-broker-key-0001";
const QUEUE = `cgw-bench-${process.pid}-${Date.now()}`;

/** The FSU of message i, and the same milestone as JSON (the FSU's DEP: 16 Oct 17:45 at FRA, local). */
const fsu = (serial: number) => `FSU/14\n020-${serial}FRAJFK/T1K100\nDEP/LH400/16OCT/FRAJFK/T1K100/A1745/E2010\n`;
const json = (serial: number) => ({
  awb: `020-${serial}`,
  state: "DEP",
  station: "FRA",
  flight: "LH400",
  timestamp: "2025-10-16T17:45:00+02:00",
});

async function main(): Promise<void> {
  const gateway = await startGateway(GATEWAY, {
    DATA_DIR: "memory://",
    BOOTSTRAP_API_KEY: API_KEY,
    AMQP_URL,
    AMQP_QUEUE: QUEUE,
    // BENCH_AMQP_PREFETCH: the gateway's AMQP_PREFETCH for this run (its default unless given).
    ...(process.env.BENCH_AMQP_PREFETCH ? { AMQP_PREFETCH: process.env.BENCH_AMQP_PREFETCH } : {}),
  });
  const publisher = await connect(AMQP_URL);
  const channel = await publisher.createConfirmChannel();
  try {
    // REST first: the JSON path as a carrier's system would use it.
    const restStart = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < MESSAGES) {
        const from = next;
        next = Math.min(MESSAGES, next + REST_BATCH);
        const body = JSON.stringify(Array.from({ length: next - from }, (_, i) => json(10_000_000 + from + i)));
        const answer = await fetch(`${gateway.url}/carrier/handling/shipment/events`, {
          method: "POST",
          headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
          body,
        });
        if (answer.status !== 202) throw new Error(`REST ingestion answered ${answer.status}: ${await answer.text()}`);
        await answer.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: REST_CONCURRENCY }, worker));
    const restSeconds = (performance.now() - restStart) / 1000;

    const stored = async () =>
      (await metricsOf(gateway.url)).get('gateway_broker_messages_total{outcome="stored"}') ?? 0;
    const brokerStart = performance.now();
    for (let i = 0; i < MESSAGES; i++) {
      // Wait for the broker when its buffer is full, as a well-behaved publisher does.
      if (
        !channel.sendToQueue(QUEUE, Buffer.from(fsu(20_000_000 + i)), { persistent: true, contentType: "text/plain" })
      )
        await new Promise((resolve) => channel.once("drain", resolve));
    }
    await channel.waitForConfirms();
    const publishSeconds = (performance.now() - brokerStart) / 1000;
    while ((await stored()) < MESSAGES) await new Promise((resolve) => setTimeout(resolve, 100));
    const brokerSeconds = (performance.now() - brokerStart) / 1000;

    const metrics = await metricsOf(gateway.url);
    const failed =
      (metrics.get('gateway_broker_messages_total{outcome="dead_lettered"}') ?? 0) +
      (metrics.get('gateway_broker_messages_total{outcome="failed"}') ?? 0);
    if (failed > 0) throw new Error(`${failed} broker messages dead-lettered or failed; the measurement is void`);
    const restRate = MESSAGES / restSeconds;
    const brokerRate = MESSAGES / brokerSeconds;
    console.log(`${MESSAGES} events each way`);
    console.log(
      `REST JSON, ${REST_BATCH} events a request, ${REST_CONCURRENCY} in flight: ${restRate.toFixed(0)} events/s (${restSeconds.toFixed(1)} s)`,
    );
    console.log(
      `RabbitMQ FSU, one status a message, prefetch ${process.env.BENCH_AMQP_PREFETCH ?? "500 (default)"}: ${brokerRate.toFixed(0)} events/s (${brokerSeconds.toFixed(1)} s; publishing took ${publishSeconds.toFixed(1)} s)`,
    );
    console.log(`ratio broker / REST: ${(brokerRate / restRate).toFixed(2)} (target ≥ 0.5)`);
  } finally {
    // The gateway first: a consumer whose queue is deleted under it declares it again.
    const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
    gateway.child.kill("SIGTERM");
    await exited;
    await channel.deleteQueue(QUEUE).catch(() => {});
    await channel.deleteQueue(`${QUEUE}.dead`).catch(() => {});
    await publisher.close().catch(() => {});
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * RabbitMQ itself restarted mid-stream, under two gateway instances consuming one queue: a RabbitMQ
 * node of this test's own (test/support/private-rabbitmq.ts) is stopped while the instances hold
 * unacknowledged messages, and started again with its data; both instances reconnect, readiness says
 * so meanwhile, and every message published before the stop (most of them still queued or held
 * then) and after the start ends up stored, once, with dense positions. "Once" rests on the unique
 * dedupe keys (a redelivered message stores nothing new); whether a redelivery happens in a given run
 * depends on what was held at the stop, so this test shows that nothing is lost or doubled across the
 * restart, not that a redelivery took place.
 */
import { connect } from "amqplib";
import type { App } from "../src/app";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";
import { privateRabbitAvailable, RABBITMQ_SERVER, startPrivateRabbit } from "./support/private-rabbitmq";
import type { PrivateService } from "./support/private-services";
import { until } from "./support/webhooks";

// In CI the machine has RabbitMQ installed: a missing server fails the run instead of skipping it;
// elsewhere the skip says why.
const describeRestart: jest.Describe =
  privateRabbitAvailable() || process.env.CI === "true"
    ? describeBackend("postgres")
    : (((name: string, fn: () => void) =>
        describe.skip(
          `${name} — SKIPPED: no ${RABBITMQ_SERVER} to start a RabbitMQ node of its own`,
          fn,
        )) as unknown as jest.Describe);

const QUEUE = "cgw-restart";
const AWBS = 20;
/** 20 AWBs × 100 statuses before the restart, and 20 × 10 after. */
const BEFORE = 100;
const AFTER = 10;

/** AWB number i (check digit right: the serial's first seven digits mod 7). */
const awbOf = (i: number) => {
  const serial = 5_000_000 + i;
  return `020-${serial}${serial % 7}`;
};
/** One FSU with one RCS of AWB i, its j-th (a distinct time: 16OCT 00:00 + j minutes, j < 1,440). */
const rcs = (i: number, j: number) => {
  const time = `${String(Math.floor(j / 60)).padStart(2, "0")}${String(j % 60).padStart(2, "0")}`;
  return `FSU/14\n${awbOf(i)}FRAJFK/T1K10\nRCS/16OCT${time}/FRA/T1K10\n`;
};

describeRestart("carrier messages while RabbitMQ restarts, two instances on one queue", () => {
  const disposers = new Disposers();
  let rabbit: PrivateService;
  const apps: Array<{ app: App; url: string }> = [];
  const awbs = Array.from({ length: AWBS }, (_, i) => awbOf(i));

  const publish = async (from: number, to: number) => {
    const connection = await connect(rabbit.url);
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue(QUEUE, { durable: true });
    for (let j = from; j < to; j++)
      for (let i = 0; i < AWBS; i++)
        channel.sendToQueue(QUEUE, Buffer.from(rcs(i, j)), { persistent: true, contentType: "text/plain" });
    await channel.waitForConfirms();
    await connection.close();
  };
  const stored = async () => {
    const [row] = await apps[0]!.app.database.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(
      `SELECT count(*) AS n FROM status_event WHERE awb = ANY($1::text[])`,
      awbs,
    );
    return Number(row!.n);
  };
  const brokerStates = async () =>
    Promise.all(apps.map(async ({ app }) => (await app.services.health.readiness()).broker));
  const storedBy = async (url: string) => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`gateway_broker_messages_total{outcome="stored"}`));
    return line ? Number(line.split(" ").pop()) : 0;
  };

  beforeAll(async () => {
    rabbit = await startPrivateRabbit();
    disposers.add(() => rabbit.dispose());
    await rabbit.start();
    // Few messages held at once, so that the backlog outlasts the moment the broker is stopped.
    const first = await startApp("postgres", disposers, {
      AMQP_URL: rabbit.url,
      AMQP_QUEUE: QUEUE,
      AMQP_PREFETCH: "5",
    });
    const second = await startApp("postgres", disposers, {
      AMQP_URL: rabbit.url,
      AMQP_QUEUE: QUEUE,
      AMQP_PREFETCH: "5",
      DATABASE_URL: first.env.DATABASE_URL!,
    });
    apps.push(first, second);
    expect(await brokerStates()).toEqual(["consuming", "consuming"]);
  }, 180_000);
  afterAll(() => disposers.disposeAll(), 120_000);

  it("stores every message once: before, across and after the restart, shared by both instances", async () => {
    await publish(0, BEFORE);
    const total = AWBS * (BEFORE + AFTER);
    await until(async () => (await stored()) >= 50, { what: "the first messages stored", timeoutMs: 60_000 });

    await rabbit.stop();
    const atStop = await stored();
    // Mid-stream: the broker stopped with messages still queued or held (else this proves nothing).
    expect(atStop).toBeLessThan(AWBS * BEFORE);
    await until(async () => (await brokerStates()).every((s) => s === "reconnecting"), {
      what: "both instances reporting the broker lost",
    });

    await rabbit.start();
    await until(async () => (await brokerStates()).every((s) => s === "consuming"), {
      what: "both instances consuming again",
      timeoutMs: 90_000,
    });
    await publish(BEFORE, BEFORE + AFTER);
    await until(async () => (await stored()) === total, { what: `all ${total} milestones stored`, timeoutMs: 120_000 });

    // Nothing twice: each AWB holds exactly its statuses, at positions 1…n with no gap, and one history record each.
    const rows = await apps[0]!.app.database.prisma.$queryRawUnsafe<
      Array<{ awb: string; n: bigint; top: bigint; statuses: bigint }>
    >(
      `SELECT e.awb, count(*) AS n, max(e.position) AS top,
              (SELECT count(*) FROM carrier_status c WHERE c.awb = e.awb) AS statuses
       FROM status_event e WHERE e.awb = ANY($1::text[]) GROUP BY e.awb ORDER BY e.awb`,
      awbs,
    );
    expect(rows.map((r) => [r.awb, Number(r.n), Number(r.top), Number(r.statuses)])).toEqual(
      [...awbs].sort().map((awb) => [awb, BEFORE + AFTER, BEFORE + AFTER, BEFORE + AFTER]),
    );
    // Both instances took part: the broker shared the queue between them.
    const counts = await Promise.all(apps.map(({ url }) => storedBy(url)));
    expect(counts.every((n) => n > 0)).toBe(true);

    const connection = await connect(rabbit.url);
    const channel = await connection.createChannel();
    await until(async () => (await channel.checkQueue(QUEUE)).messageCount === 0, { what: "the queue drained" });
    expect((await channel.checkQueue(`${QUEUE}.dead`)).messageCount).toBe(0);
    await connection.close();
    // The live history reads the same.
    const history = (await (
      await fetch(`${apps[1]!.url}/carrier/handling/shipment/events?awb=${awbs[0]}`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as unknown[];
    expect(history).toHaveLength(BEFORE + AFTER);
  }, 300_000);
});

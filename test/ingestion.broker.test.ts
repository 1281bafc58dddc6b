/**
 * Carrier messages through RabbitMQ (the machine's broker at 127.0.0.1:5672, or, where none runs there,
 * a node of this file's own started from the installed rabbitmq-server; on queues of this run's own,
 * deleted after): FSU, XFSU and JSON by content type into stored milestones and a subscriber's
 * callback; an unreadable message dead-lettered with its reason while the next one still flows; a
 * message published twice stored once; the connection cut mid-stream (through a TCP proxy this test
 * owns, refusing connections for a while as a restarting broker does) and the database stopped
 * mid-stream (a private PostgreSQL server) — nothing lost, nothing stored twice, readiness says so.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import path from "node:path";
import { connect, type ChannelModel, type ConfirmChannel } from "amqplib";
import pino from "pino";
import { type App, createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { ADMIN_KEY, Disposers, startApp, testEnvironment } from "./support/harness";
import { postgresAvailable } from "./support/postgres";
import { RABBITMQ_SERVER, privateRabbitAvailable, startPrivateRabbit } from "./support/private-rabbitmq";
import { type PrivateService, startPrivatePostgres } from "./support/private-services";
import { startReceiver } from "./support/receiver";
import { openSubscriber } from "./support/ws-protocol";
import { until } from "./support/webhooks";

const MACHINE_RABBITMQ = "amqp://guest:guest@127.0.0.1:5672";
const fixture = (name: string) => readFileSync(path.join(__dirname, "fixtures", name), "utf8");
const EVENTS = "/carrier/handling/shipment/events";

/** Whether the broker accepts a TCP connection (probed once, synchronously, so the suite can be skipped). */
const rabbitUp =
  spawnSync(process.execPath, [
    "-e",
    "require('net').connect(5672,'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))",
  ]).status === 0;
/**
 * With no broker at 5672, a RabbitMQ node of this file's own (test/support/private-rabbitmq.ts), started
 * once for both describes and stopped after them. Skipped, saying why, only without either; in CI
 * (.ci/run starts RabbitMQ) an absent broker fails the run instead.
 */
const describeRabbit: jest.Describe =
  rabbitUp || privateRabbitAvailable() || process.env.CI === "true"
    ? describe
    : (((name: string, fn: () => void) =>
        describe.skip(
          `${name} — SKIPPED: no RabbitMQ at 127.0.0.1:5672 and no ${RABBITMQ_SERVER} to start one`,
          fn,
        )) as unknown as jest.Describe);
let privateBroker: Promise<PrivateService> | undefined;
/** The broker's URL: the machine's, or the private node's (started on first use). */
async function brokerUrl(): Promise<string> {
  if (rabbitUp) return MACHINE_RABBITMQ;
  privateBroker ??= startPrivateRabbit().then(async (node) => {
    await node.start();
    return node;
  });
  return (await privateBroker).url;
}
afterAll(async () => {
  await (await privateBroker)?.dispose();
}, 90_000);

/**
 * A TCP proxy to RabbitMQ: `cut` destroys every connection and refuses new ones until `restore`;
 * `stall` stops passing what the gateway sends (its acknowledgements) while the broker's deliveries
 * still come through, as a network that drops one direction does, until the next `cut`.
 */
async function startProxy(
  target: number,
): Promise<{ port: number; cut(): void; restore(): void; stall(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let stalled = false;
  const server: Server = createServer((client) => {
    if (refusing) return void client.destroy();
    const upstream = tcpConnect(target, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("data", (chunk: Buffer) => {
      if (!stalled) upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      refusing = true;
      stalled = false;
      for (const s of sockets) s.destroy();
    },
    stall() {
      stalled = true;
    },
    restore() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An FSU with one DEP of its own AWB (check digits are not enforced here). */
const depFsu = (serial: number) => `FSU/14\n020-${serial}FRAJFK/T1K100\nDEP/LH400/16OCT/FRAJFK/T1K100/A1745/E2010\n`;

describeRabbit("carrier messages through RabbitMQ", () => {
  const disposers = new Disposers();
  const queue = `cgw-test-${process.pid}-${Date.now()}`;
  const deadLetterQueue = `${queue}.dead`;
  let publisher: ChannelModel;
  let channel: ConfirmChannel;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let app: App;
  let url: string;

  const publish = async (
    body: string,
    contentType: string | undefined,
    headers: Record<string, unknown> = {},
    properties: { messageId?: string } = {},
  ) => {
    channel.sendToQueue(queue, Buffer.from(body), {
      persistent: true,
      headers,
      ...(contentType === undefined ? {} : { contentType }),
      ...properties,
    });
    await channel.waitForConfirms();
  };
  const readiness = () => app.services.health.readiness();
  const metric = async (outcome: string) => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`gateway_broker_messages_total{outcome="${outcome}"}`));
    return line ? Number(line.split(" ").pop()) : 0;
  };
  const history = async (awb: string) =>
    (await (
      await fetch(`${url}${EVENTS}?awb=${awb}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    ).json()) as Array<{ state: string; station: string; flight: string | null }>;
  /** Connections the consumer has opened (more than one: reconnections). */
  const connections = async () =>
    Number(/^gateway_broker_connections_total (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())![1]);
  /** No message waits in the queue (those held unacknowledged by a consumer are not counted). */
  const drained = async () => (await channel.checkQueue(queue)).messageCount === 0;

  beforeAll(async () => {
    const broker = await brokerUrl();
    publisher = await connect(broker);
    channel = await publisher.createConfirmChannel();
    disposers.add(async () => {
      await channel.deleteQueue(queue).catch(() => {});
      await channel.deleteQueue(deadLetterQueue).catch(() => {});
      await publisher.close();
    });
    proxy = await startProxy(Number(new URL(broker).port));
    disposers.add(() => proxy.close());
    ({ app, url } = await startApp("pglite", disposers, {
      AMQP_URL: `amqp://guest:guest@127.0.0.1:${proxy.port}`,
      AMQP_QUEUE: queue,
      AMQP_PREFETCH: "20",
    }));
    expect((await readiness()).broker).toBe("consuming");
  }, 150_000);
  afterAll(() => disposers.disposeAll());

  it("stores FSU, XFSU and JSON by content type, and notifies a subscriber's callback and a live subscriber", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const live = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => live.close());
    live.subscribe("1", "subscription($awb: String!) { awbStatusChanged(awb: $awb) { awb state station } }", {
      awb: "020-12345675",
    });
    const subscribed = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ awb: "020-12345675", callback: `${receiver.url}/ok/broker`, states: ["RCF", "DEP"] }),
    });
    expect(subscribed.status).toBe(201);
    const { subscriptionId } = (await subscribed.json()) as { subscriptionId: string };
    const notified = () => receiver.posts.filter((post) => post.path === "/ok/broker");

    await publish(fixture("fsu/arr-rcf.txt"), "text/plain; charset=utf-8");
    await publish(fixture("xfsu/dep-with-offset.xml"), "application/xml");
    const json = { awb: "020-22222222", state: "RCS", station: "FRA", eventId: `json-${queue}` };
    await publish(JSON.stringify(json), "application/json");
    await publish(JSON.stringify({ ...json, state: "MAN", eventId: `json-bare-${queue}` }), undefined);

    await until(async () => (await history("020-12345675")).some((m) => m.state === "DEP"), { what: "the XFSU's DEP" });
    await until(async () => (await history("020-22222222")).length === 2, { what: "both JSON milestones" });
    // The FSU's RCF and the XFSU's DEP reach the callback, each once, and nothing else does (ARR is
    // not subscribed to): as many notifications as deliveries queued for the subscription.
    await until(() => notified().length >= 2, { what: "the RCF and DEP notifications" });
    const queued = await app.database.prisma.delivery.count({ where: { subscriptionId } });
    expect(queued).toBe(2);
    const bodies = notified().map((post) => JSON.parse(post.body) as { AWB: string; State: string });
    expect(bodies.map((b) => b.State).sort()).toEqual(["DEP", "RCF"]);
    expect(bodies.every((b) => b.AWB === "020-12345675")).toBe(true);
    expect((await history("020-12345675")).map((m) => m.state)).toEqual(expect.arrayContaining(["ARR", "RCF", "DEP"]));
    // The live subscriber sees the same milestones as they are stored.
    const seen = () => live.received.map((data) => (data.awbStatusChanged as { state: string }).state);
    await until(() => ["ARR", "RCF", "DEP"].every((state) => seen().includes(state)), { what: "the live events" });
    expect(live.received.every((data) => data.awbStatusChanged.awb === "020-12345675")).toBe(true);
    expect(live.errors).toEqual([]);
    expect(await metric("stored")).toBe(4);
  }, 60_000);

  it("dead-letters an unreadable message with the reason in its headers, and the next one still flows", async () => {
    const before = await metric("stored");
    await publish(fixture("fsu/bad-consignment.txt"), "text/plain", { "x-carrier": "LH" });
    await publish("{ not json", "application/json");
    await publish("%PDF-1.7", "application/pdf");
    await publish(depFsu(30000001), "text/plain");
    await until(async () => (await history("020-30000001")).length === 1, { what: "the good message after" });
    // A dead letter is counted once the broker confirms it, which may come after the good message's commit.
    await until(async () => (await metric("dead_lettered")) >= 3, { what: "the three dead letters" });
    expect(await metric("stored")).toBe(before + 1);
    expect(await metric("dead_lettered")).toBe(3);

    const dead = [];
    for (let m = await channel.get(deadLetterQueue); m; m = await channel.get(deadLetterQueue)) {
      dead.push(m);
      channel.ack(m);
    }
    expect(dead).toHaveLength(3);
    const [fsu, json, pdf] = dead;
    expect(fsu!.content.toString()).toBe(fixture("fsu/bad-consignment.txt"));
    expect(fsu!.properties.contentType).toBe("text/plain");
    expect(fsu!.properties.deliveryMode).toBe(2);
    const headers = fsu!.properties.headers!;
    expect(headers["x-carrier"]).toBe("LH"); // the original headers are kept
    expect(headers["x-rejection-reason"]).toMatch(/^VALIDATION_FAILED: line 2: .*consignment line/);
    expect(JSON.parse(String(headers["x-rejection-errors"]))).toEqual([
      { field: "line 2", message: expect.stringContaining("consignment line") },
    ]);
    expect(headers["x-rejected-from"]).toBe(queue);
    expect(json!.properties.headers!["x-rejection-reason"]).toMatch(/^MALFORMED_JSON: /);
    expect(pdf!.properties.headers!["x-rejection-reason"]).toMatch(/^UNSUPPORTED_MEDIA_TYPE: /);
  }, 60_000);

  it("dead-letters a message the database refuses instead of handing it back for ever, into a dead-letter queue deleted meanwhile", async () => {
    const before = { stored: await metric("stored"), dead: await metric("dead_lettered") };
    // Read fine, refused by PostgreSQL: a rule of this test's own database (SQLSTATE 23514, check_violation).
    await app.database.prisma.$executeRawUnsafe(
      `ALTER TABLE status_event ADD CONSTRAINT refuses_of_test CHECK (awb <> '020-30000014')`,
    );
    const refused = { awb: "020-30000014", state: "RCS", station: "FRA", eventId: `refused-${queue}` };
    // The dead-letter queue deleted by mistake meanwhile: the dead letter must not vanish with it.
    await channel.deleteQueue(deadLetterQueue);
    await publish(JSON.stringify(refused), "application/json");
    await publish(depFsu(30000003), "text/plain");
    await until(async () => (await history("020-30000003")).length === 1, { what: "the good message after" });
    await until(async () => (await metric("dead_lettered")) === before.dead + 1, { what: "the dead letter" });
    expect(await metric("stored")).toBe(before.stored + 1);
    const dead = await channel.get(deadLetterQueue);
    expect(dead).not.toBe(false);
    if (dead === false) return;
    channel.ack(dead);
    expect(JSON.parse(dead.content.toString())).toEqual(refused);
    expect(String(dead.properties.headers!["x-rejection-reason"])).toMatch(/^INTERNAL: /);
    expect(await history("020-30000014")).toEqual([]);
    expect(await drained()).toBe(true);
  }, 60_000);

  it("dead-letters a message whose ingestion keeps failing for another reason than the database's, after a bounded number of attempts", async () => {
    const before = { stored: await metric("stored"), dead: await metric("dead_lettered") };
    // A failure of its own (SQLSTATE P0001, raise_exception: no class the database refuses data with),
    // on every attempt: before, the message was handed back for ever.
    await app.database.prisma.$executeRawUnsafe(
      `CREATE FUNCTION fails_of_test() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.awb = '020-30000015' THEN RAISE EXCEPTION 'a fault of this test'; END IF; RETURN NEW; END $$`,
    );
    await app.database.prisma.$executeRawUnsafe(
      `CREATE TRIGGER fails_of_test BEFORE INSERT ON status_event FOR EACH ROW EXECUTE FUNCTION fails_of_test()`,
    );
    const failing = { awb: "020-30000015", state: "RCS", station: "FRA", eventId: `failing-${queue}` };
    await publish(JSON.stringify(failing), "application/json", { "x-carrier": "LH" }, { messageId: "m-failing" });
    await until(async () => (await metric("dead_lettered")) === before.dead + 1, {
      what: "the dead letter after the last attempt",
      timeoutMs: 50_000,
    });
    await publish(depFsu(30000016), "text/plain");
    await until(async () => (await history("020-30000016")).length === 1, { what: "the next message" });
    expect(await metric("stored")).toBe(before.stored + 1);
    expect(await metric("failed")).toBeGreaterThanOrEqual(4);
    const dead = await channel.get(deadLetterQueue);
    expect(dead).not.toBe(false);
    if (dead === false) return;
    channel.ack(dead);
    expect(JSON.parse(dead.content.toString())).toEqual(failing);
    expect(dead.properties.messageId).toBe("m-failing");
    expect(dead.properties.headers!["x-carrier"]).toBe("LH");
    expect(String(dead.properties.headers!["x-rejection-reason"])).toMatch(/^INTERNAL: .*a fault of this test/);
    expect(dead.properties.headers!["x-rejection-attempts"]).toBe(5);
    expect(await history("020-30000015")).toEqual([]);
    expect(await drained()).toBe(true);
  }, 60_000);

  it("stores a JSON message without eventId and timestamp once though it is redelivered after its commit, before its ack", async () => {
    const awb = "020-30000017";
    const untimed = JSON.stringify([
      { awb, state: "RCS", station: "FRA" },
      { awb, state: "MAN", station: "FRA" },
    ]);
    const before = {
      connections: await connections(),
      duplicate: await metric("duplicate"),
      stored: await metric("stored"),
    };
    // What the gateway sends is lost from now on (its acknowledgement among it); the delivery still comes.
    proxy.stall();
    await publish(untimed, "application/json", {}, { messageId: "m-untimed" });
    await until(async () => (await history(awb)).length === 2, { what: "the message's commit" });
    proxy.cut(); // the acknowledgement never reached the broker: it delivers the message again
    proxy.restore();
    await until(async () => (await connections()) === before.connections + 1, { what: "the reconnection" });
    const settled = async () => (await metric("stored")) + (await metric("duplicate"));
    await until(async () => (await settled()) === before.stored + before.duplicate + 2, { what: "the redelivery" });
    expect((await history(awb)).map((m) => m.state)).toEqual(["RCS", "MAN"]);
    expect(await metric("duplicate")).toBe(before.duplicate + 1);
    expect(await drained()).toBe(true);
  }, 60_000);

  it("keys a JSON event without eventId and timestamp by its message: messageId and content", async () => {
    const awb = "020-30000018";
    const body = (state: string) => JSON.stringify({ awb, state });
    const settled = async () => (await metric("stored")) + (await metric("duplicate"));
    const before = { settled: await settled(), duplicate: await metric("duplicate") };
    // The same message published twice, with its messageId or without one: one event each.
    await publish(body("RCS"), "application/json", {}, { messageId: "m-same" });
    await publish(body("RCS"), "application/json", {}, { messageId: "m-same" });
    await publish(body("MAN"), undefined);
    await publish(body("MAN"), undefined);
    // Two messages: another messageId, or another body under the same messageId.
    await publish(body("RCS"), "application/json", {}, { messageId: "m-other" });
    await publish(body("DEP"), "application/json", {}, { messageId: "m-same" });
    await until(async () => (await settled()) === before.settled + 6, { what: "the six messages settled" });
    expect((await history(awb)).map((m) => m.state).sort()).toEqual(["DEP", "MAN", "RCS", "RCS"]);
    expect(await metric("duplicate")).toBe(before.duplicate + 2);
  }, 60_000);

  it("records a message of statuses that are no milestones in the history, once, and acknowledges it", async () => {
    const before = await metric("unmapped");
    const foh = "FSU/14\n020-40000004FRAJFK/T2K40\nFOH/16OCT1317/FRA/T2K40/LCAG\nOSI/FRAGILE\n";
    await publish(foh, "text/plain");
    await publish(foh, "text/plain");
    await until(async () => (await metric("unmapped")) === before + 2, { what: "both messages settled" });
    const statuses = (await (
      await fetch(`${url}/carrier/handling/shipment/carrier-statuses?awb=020-40000004`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as Array<{ code: string; mapped: boolean; quantity: { pieces: number } | null }>;
    expect(statuses).toEqual([
      expect.objectContaining({ code: "FOH", mapped: false, quantity: expect.objectContaining({ pieces: 2 }) }),
      expect.objectContaining({ code: "OSI", mapped: false }),
    ]);
    expect(await history("020-40000004")).toEqual([]);
    expect(await drained()).toBe(true);
  }, 60_000);

  it("stores a message published twice once", async () => {
    const duplicates = await metric("duplicate");
    await publish(depFsu(30000002), "text/plain");
    await publish(depFsu(30000002).replace(/\n/g, "\r\n"), "text/plain");
    await until(async () => (await metric("duplicate")) === duplicates + 1, { what: "the second one read" });
    expect(await history("020-30000002")).toHaveLength(1);
  }, 60_000);

  it("reconnects after the connection is cut mid-stream: nothing lost, nothing stored twice, readiness says so", async () => {
    const count = 600;
    const first = 40000000;
    const stored = async () =>
      (
        await app.database.sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM status_event WHERE awb >= $1 AND awb < $2",
          [`020-${first}`, `020-${first + count}`],
        )
      )[0]!.n;
    for (let i = 0; i < count; i++)
      channel.sendToQueue(queue, Buffer.from(depFsu(first + i)), { persistent: true, contentType: "text/plain" });
    await channel.waitForConfirms();
    await until(async () => (await stored()) > 0, { what: "the first messages stored" });

    const connectionsBefore = await connections();
    proxy.cut(); // mid-stream: messages received and not yet acknowledged go back to the queue
    await until(async () => (await readiness()).broker === "reconnecting", { what: "readiness: reconnecting" });
    const readyz = await fetch(`${url}/readyz`);
    expect(readyz.status).toBe(200); // a lost broker leaves the instance ready
    expect(((await readyz.json()) as { broker: string }).broker).toBe("reconnecting");
    expect(await stored()).toBeLessThan(count);
    await new Promise((r) => setTimeout(r, 1_500)); // refused meanwhile, as a restarting broker is
    proxy.restore();

    await until(async () => (await readiness()).broker === "consuming", { what: "consuming again" });
    await until(async () => (await stored()) === count, { what: "every message stored", timeoutMs: 60_000 });
    await until(drained, { what: "the queue drained" });
    const rows = await app.database.sql.query<{ awbs: number; n: number }>(
      "SELECT count(DISTINCT awb)::int AS awbs, count(*)::int AS n FROM status_event WHERE awb >= $1 AND awb < $2",
      [`020-${first}`, `020-${first + count}`],
    );
    expect(rows[0]).toEqual({ awbs: count, n: count });
    expect(await connections()).toBe(connectionsBefore + 1);
  }, 120_000);
});

// A private PostgreSQL server needs the PostgreSQL binaries, there when the shared server is.
(postgresAvailable() ? describeRabbit : describe.skip)(
  "carrier messages through RabbitMQ while the database is down",
  () => {
    const disposers = new Disposers();
    const queue = `cgw-test-db-${process.pid}-${Date.now()}`;
    afterAll(() => disposers.disposeAll());

    it("hands messages back while it cannot store them, and stores them all once it can", async () => {
      const postgres = await startPrivatePostgres();
      disposers.add(() => postgres.dispose());
      const broker = await brokerUrl();
      const publisher = await connect(broker);
      const channel = await publisher.createConfirmChannel();
      disposers.add(async () => {
        await channel.deleteQueue(queue).catch(() => {});
        await channel.deleteQueue(`${queue}.dead`).catch(() => {});
        await publisher.close();
      });
      // Its log says when an ingestion failed (/metrics cannot: its delivery gauges read the database).
      const lines: string[] = [];
      const log = pino({ level: "error" }, { write: (line: string) => void lines.push(line) });
      const { env } = await testEnvironment("postgres", {
        DATABASE_URL: postgres.url,
        AMQP_URL: broker,
        AMQP_QUEUE: queue,
      });
      const app = await createApp(loadConfig(env), log);
      disposers.add(() => app.stop());
      const url = await app.listen();
      const metric = async (outcome: string) => {
        const line = (await (await fetch(`${url}/metrics`)).text())
          .split("\n")
          .find((l) => l.startsWith(`gateway_broker_messages_total{outcome="${outcome}"}`));
        return line ? Number(line.split(" ").pop()) : 0;
      };

      await postgres.stop();
      const count = 20;
      for (let i = 0; i < count; i++)
        channel.sendToQueue(queue, Buffer.from(depFsu(50000000 + i)), { persistent: true, contentType: "text/plain" });
      await channel.waitForConfirms();
      const failures = () => lines.filter((l) => l.includes("storing broker messages failed")).length;
      await until(() => failures() >= 2, {
        what: "two failed ingestions (handed back, then again)",
        timeoutMs: 30_000,
      });
      await postgres.start();

      await until(async () => (await metric("stored")) === count, { what: "every message stored", timeoutMs: 60_000 });
      const rows = await app.database.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM status_event WHERE awb >= '020-50000000' AND awb < '020-50000020'",
        [],
      );
      expect(rows[0]!.n).toBe(count);
      expect(await metric("failed")).toBeGreaterThanOrEqual(2);
      expect(await metric("dead_lettered")).toBe(0); // never dead-lettered for the database's sake
      expect((await channel.checkQueue(`${queue}.dead`)).messageCount).toBe(0);
    }, 120_000);
  },
);

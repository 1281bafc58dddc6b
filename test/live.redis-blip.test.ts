/**
 * Live events across instances when one instance's Redis publisher blips. While
 * its publisher is not ready an instance serves its own subscribers directly; other instances'
 * subscribers must still get those events, from the database, once the publisher is back: it
 * announces the heads of the AWBs it published meanwhile (or, past a bound, asks every instance to
 * resync), and their streams fill from storage.
 *
 * One instance's publisher alone is taken down, as a network blip on its side would: the default
 * user refuses new connections and that instance's ordinary (non-pubsub) connections are killed.
 * Stopping the whole Redis would take the other instance's connections down too, and it would
 * resync on its own reconnect, hiding the loss.
 */
import Redis from "ioredis";
import { createLiveEvents, type LiveEvents, type LiveMilestone } from "../src/live/live-events";
import { ADMIN_KEY, describeBackend, Disposers, silentLogger, startApp } from "./support/harness";
import { type PrivateService, startPrivateRedis } from "./support/private-services";
import { until } from "./support/webhooks";
import { openSubscriber } from "./support/ws-protocol";

const SHIPMENT = "/carrier/handling/shipment";
const AWB_QUERY = `subscription($awb: String!) { awbStatusChanged(awb: $awb) { sequence state } }`;
const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

/** Ids of the ordinary (non-pubsub) connections Redis has now, but for `except`. */
async function normalConnections(control: Redis, except: number): Promise<number[]> {
  const list = String(await control.call("CLIENT", "LIST", "TYPE", "normal"));
  return list
    .split("\n")
    .map((line) => Number(/(?:^| )id=(\d+)/.exec(line)?.[1]))
    .filter((id) => Number.isInteger(id) && id !== except);
}

describeBackend("postgres")("live events across two instances when one's Redis publisher blips", () => {
  const disposers = new Disposers();
  let redis: PrivateService;
  let control: Redis;
  let controlId: number;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    disposers.add(() => void control.disconnect());
    controlId = Number(await control.client("ID"));
  });
  afterAll(() => disposers.disposeAll());

  it("B's subscriber gets the milestones A stored while A's publisher was down, once it is back", async () => {
    const a = await startApp("postgres", disposers, { REDIS_URL: redis.url });
    // Everything A opened so far: its live publisher and the shared limits' connection.
    const aConnections = await normalConnections(control, controlId);
    const b = await startApp("postgres", disposers, { DATABASE_URL: a.env.DATABASE_URL!, REDIS_URL: redis.url });
    const redisOf = async (url: string) => ((await (await fetch(`${url}/readyz`)).json()) as { redis: string }).redis;
    await until(async () => (await redisOf(a.url)) === "up" && (await redisOf(b.url)) === "up", {
      what: "both instances on Redis",
    });

    const awb = "020-70000025";
    let ingested = 0; // this AWB's milestones so far: its stream's head (a fresh database)
    const ingest = async (states: string[]) => {
      ingested += states.length;
      const answer = await fetch(`${a.url}${SHIPMENT}/events`, {
        method: "POST",
        headers,
        body: JSON.stringify(states.map((state) => ({ awb, state }))),
      });
      expect(answer.status).toBe(202);
    };
    const onB = await openSubscriber(b.url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => onB.close());
    const onA = await openSubscriber(a.url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => onA.close());
    const positions = (s: typeof onB) => s.received.map((d) => (d.awbStatusChanged as { sequence: string }).sequence);
    onB.subscribe("b", AWB_QUERY, { awb });
    onA.subscribe("a", AWB_QUERY, { awb });
    // Both subscriptions are live once an event reaches both (a subscription registered after an
    // event misses it: it starts at the head), and both have seen every event sent so far.
    await until(
      async () => {
        if (positions(onB).length === 0 || positions(onA).length === 0) await ingest(["RCS"]);
        return positions(onB).at(-1) === String(ingested) && positions(onA).at(-1) === String(ingested);
      },
      { what: "the first events on both instances" },
    );
    const before = positions(onB).length;
    const beforeA = positions(onA).length;
    const head = ingested;

    await control.call("ACL", "SETUSER", "default", "off"); // new connections refused, open ones kept
    try {
      for (const id of aConnections) await control.client("KILL", "ID", String(id));
      await until(async () => (await redisOf(a.url)) === "down", { what: "A's publisher down" });
      expect(await redisOf(b.url)).toBe("up"); // B saw nothing go wrong: it has no reason to resync
      await ingest(["MAN", "DEP"]);
      // A's own subscriber is served directly meanwhile.
      await until(() => positions(onA).length === beforeA + 2, { what: "the events on A", timeoutMs: 5_000 });
    } finally {
      await control.call("ACL", "SETUSER", "default", "on");
    }
    await until(async () => (await redisOf(a.url)) === "up", { what: "A's publisher back" });
    await until(() => positions(onB).length >= before + 2, { what: "the missed events on B", timeoutMs: 10_000 });
    expect(positions(onB).slice(before)).toEqual([String(head + 1), String(head + 2)]);

    // And what follows is fanned out through Redis again, once.
    await ingest(["ARR"]);
    await until(() => positions(onB).length >= before + 3, { what: "the next event on B" });
    await new Promise((r) => setTimeout(r, 300)); // room for a repeat to show
    expect(positions(onB).slice(before)).toEqual([String(head + 1), String(head + 2), String(head + 3)]);
    expect(new Set(positions(onB)).size).toBe(positions(onB).length); // none twice
    expect(onB.errors).toEqual([]);
  }, 120_000);
});

describe("the heads a recovered publisher announces", () => {
  let redis: PrivateService;
  let control: Redis;
  const opened: LiveEvents[] = [];
  beforeAll(async () => {
    redis = await startPrivateRedis();
    control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    await control.call("ACL", "SETUSER", "default", "on");
    await Promise.all(opened.splice(0).map((live) => live.close()));
  });
  afterAll(async () => {
    control?.disconnect();
    await redis?.dispose();
  });

  const event = (awb: string, position: number): LiveMilestone => ({
    eventId: `${awb}-${position}`,
    clientEventId: null,
    sequence: String(position),
    awb,
    state: "RCS",
    timestamp: "2026-11-21T10:00:00.000Z",
    toaTimestamp: null,
    receivedAt: "2026-11-21T10:00:01.000Z",
    station: null,
    flight: null,
  });

  /** A publisher instance and a listening one; the publisher's ordinary connection is then cut. */
  async function publisherDown(maxAnnouncedAwbs: number) {
    const controlId = Number(await control.client("ID"));
    const publishing = createLiveEvents({ redisUrl: redis.url, log: silentLogger, maxAnnouncedAwbs });
    opened.push(publishing);
    await until(() => publishing.redisStatus() === "up", { what: "the publisher up" });
    const itsConnections = await normalConnections(control, controlId);
    const listening = createLiveEvents({ redisUrl: redis.url, log: silentLogger });
    opened.push(listening);
    const heard: Array<ReadonlyMap<string, number> | "all"> = [];
    listening.onHeads((heads) => heard.push(heads));
    await until(() => listening.redisStatus() === "up", { what: "the listener up" });
    await control.call("ACL", "SETUSER", "default", "off");
    for (const id of itsConnections) await control.client("KILL", "ID", String(id));
    await until(() => publishing.redisStatus() === "down", { what: "the publisher down" });
    return { publishing, listening, heard };
  }

  it("are the latest position of each AWB published while it was down", async () => {
    expect.assertions(2);
    const { publishing, heard } = await publisherDown(10);
    publishing.publish([event("176-00000001", 4), event("176-00000001", 5)]);
    publishing.publish([event("176-00000012", 1)]);
    await control.call("ACL", "SETUSER", "default", "on");
    await until(() => heard.length > 0, { what: "the announcement" });
    expect(heard).toEqual([
      new Map([
        ["176-00000001", 5],
        ["176-00000012", 1],
      ]),
    ]);
    expect(publishing.redisStatus()).toBe("up");
  }, 30_000);

  it("become one 'resync all' past the bound", async () => {
    expect.assertions(1);
    const { publishing, heard } = await publisherDown(2);
    for (const awb of ["176-00000001", "176-00000012", "176-00000023"]) publishing.publish([event(awb, 1)]);
    await control.call("ACL", "SETUSER", "default", "on");
    await until(() => heard.length > 0, { what: "the announcement" });
    expect(heard).toEqual(["all"]);
  }, 30_000);
});

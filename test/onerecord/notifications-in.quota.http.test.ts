/**
 * POST {base}/notifications as a way to fill the disk (docs/ONE-RECORD.md "Receiving notifications"),
 * over the running gateway: a key with only the `subscriptions` scope posts 400 notifications of
 * 247 KB (the gate: 80 against a fifth of the daily bytes). From a caller no operator registered as a partner each is refused and nothing is stored;
 * from a partner they are stored until its daily quota, then refused with 429, the bytes on disk
 * within the quota; /healthz answers within 500 ms throughout. The quota holds under concurrent posts
 * and across two instances on one PostgreSQL.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import type { App } from "../../src/app";
import { MAX_STORED_NOTIFICATION_BYTES } from "../../src/onerecord/notifications-in/notifications-in.service";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { BEHAVIOUR_BACKENDS, type Backend, describeBackend, Disposers, startApp } from "../support/harness";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";
import { until } from "../support/webhooks";
import { IN_GATE } from "../support/suite";
import { expectVictimServed, type VictimView, watchAsVictim } from "../support/victim";

const API = "https://onerecord.iata.org/ns/api#";
/** ONE_RECORD_NOTIFICATION_BYTES_PER_DAY's default (docs/ONE-RECORD.md). */
const DEFAULT_BYTES_PER_DAY = 50 * 1024 * 1024;
/**
 * The daily bytes the flood runs into: the default in the full suite; in the gate a fifth of it, set
 * as ONE_RECORD_NOTIFICATION_BYTES_PER_DAY (the same code path at a fifth of the CPU).
 */
const BYTES_PER_DAY = IN_GATE ? DEFAULT_BYTES_PER_DAY / 5 : DEFAULT_BYTES_PER_DAY;
/** The attack: notifications of 247 KB each, about twice the daily bytes (400 against the default). */
const ATTACK_BYTES = 247_000;
const ATTACK_COUNT = IN_GATE ? 80 : 400;
/** How many requests the attacker keeps in flight. */
const IN_FLIGHT = 4;

const QUOTA_NAME = "onerecord_notifications_received";

/** A notification as a publisher sends it, `fields` added. */
const notification = (fields: Record<string, unknown> = {}) => ({
  "@context": { api: API },
  "@type": "api:Notification",
  "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
  "api:hasLogisticsObject": { "@id": `https://1r.publisher.test/logistics-objects/${randomUUID()}` },
  ...fields,
});

/** The api:Error's first message ("CODE: …"). */
const messageOf = (answer: OneRecordAnswer): string => {
  const details = answer.body["api:hasErrorDetail"];
  return (Array.isArray(details) ? details[0] : details)["api:hasMessage"];
};

interface Flooded {
  /** The statuses, in the order sent. */
  statuses: number[];
  /** The first answer of each status. */
  first: Record<string, { retryAfter: string | null; body: string }>;
  sentBytes: number;
  ms: number;
}

/** Runs the attacker's process to its end. */
function flood(settings: {
  url: string;
  key: string;
  count: number;
  bytes: number;
  inFlight: number;
}): Promise<Flooded> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(__dirname, "../support/notification-flood.cjs")],
      { env: { PATH: process.env.PATH ?? "", FLOOD: JSON.stringify(settings) }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

/** The api:Error's first message in an answer's text. */
const messageIn = (text: string): string => messageOf({ body: JSON.parse(text) } as OneRecordAnswer);

/**
 * A notification POSTed, its answer not checked against the shapes as `oneRecord` checks it: 40 checks
 * at once would load this process, the gateway's. The status only.
 */
async function postUnchecked(base: string, key: string, id: string): Promise<{ status: number }> {
  const res = await fetch(`${base}/notifications`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/ld+json",
      accept: "application/ld+json",
      "notification-id": id,
    },
    body: JSON.stringify(notification()),
  });
  await res.arrayBuffer();
  return { status: res.status };
}

/** How many of each status. */
const countsOf = (statuses: readonly number[]): Record<number, number> => {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

type Footprint = { rows: number; bytes: number; table: number; folder: number };
/** The bytes of the files under `dir` (the embedded database's folder). */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** Seconds to the next UTC midnight, as Retry-After should say. */
const secondsToMidnight = () => {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
};

interface Gateway {
  app: App;
  url: string;
  base: string;
  env: Record<string, string>;
}

async function gateway(backend: Backend, disposers: Disposers, env: Record<string, string> = {}): Promise<Gateway> {
  const { app, url, env: used } = await startApp(backend, disposers, env);
  return { app, url, base: `${url}/onerecord`, env: used };
}

/** A client with a key of only the `subscriptions` scope; registered as a partner when `partner`. */
async function caller(app: App, name: string, partner: boolean) {
  const client = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
  const key = (await app.services.clients.issueKey(client.clientId, ["subscriptions"])).key;
  if (partner)
    await createPartnerAdmin(app.database.prisma, undefined).add({
      serverUrl: `https://1r.${name}.test`,
      clientId: client.clientId,
    });
  return { key, clientId: client.clientId, sender: `organization-${client.clientId}` };
}

const count = async (app: App, text: string, values: unknown[]): Promise<number> => {
  const [row] = await app.database.prisma.$queryRawUnsafe<Array<{ n: bigint | number }>>(text, ...values);
  return Number(row!.n);
};
const rowsOf = (app: App, sender: string) =>
  count(app, "SELECT count(*) AS n FROM onerecord_notification_received WHERE sender = $1", [sender]);
const tableBytes = (app: App) =>
  count(app, "SELECT pg_total_relation_size('onerecord_notification_received') AS n", []);
const spentOf = async (app: App, sender: string) =>
  (
    await app.database.prisma.$queryRawUnsafe<Array<{ count: number; bytes: bigint }>>(
      "SELECT count, bytes FROM quota_usage WHERE quota = $1 AND subject = $2",
      QUOTA_NAME,
      sender,
    )
  ).map((row) => ({ count: Number(row.count), bytes: Number(row.bytes) }))[0];

describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications received within quotas on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll());

    describe(`with the default settings${IN_GATE ? " but a fifth of the daily bytes" : ""}: ${ATTACK_COUNT} notifications of 247 KB`, () => {
      let gw: Gateway;
      beforeAll(async () => {
        const quota: Record<string, string> = IN_GATE
          ? { ONE_RECORD_NOTIFICATION_BYTES_PER_DAY: String(BYTES_PER_DAY) }
          : {};
        gw = await gateway(backend, disposers, quota);
      }, 120_000);

      /** The attacker, in a process of its own (test/support/notification-flood.cjs): what it was answered. */
      const attack = (key: string) =>
        flood({ url: `${gw.base}/notifications`, key, count: ATTACK_COUNT, bytes: ATTACK_BYTES, inFlight: IN_FLIGHT });

      /** What the attack left: rows and bytes stored for the sender, the table's and the folder's growth. */
      const footprint = async (sender: string) => {
        const [row] = await gw.app.database.prisma.$queryRawUnsafe<Array<{ rows: bigint; bytes: bigint | null }>>(
          "SELECT count(*) AS rows, sum(octet_length(body::text)) AS bytes FROM onerecord_notification_received WHERE sender = $1",
          sender,
        );
        return {
          rows: Number(row!.rows),
          bytes: Number(row!.bytes ?? 0),
          table: await tableBytes(gw.app),
          folder: backend === "pglite" ? await folderBytes(gw.env.DATA_DIR!) : 0,
        };
      };
      const report = (who: string, flooded: Flooded, before: Footprint, after: Footprint, health: VictimView) =>
        console.log(
          `[notifications quota] ${who} on ${backend}: ${ATTACK_COUNT} × ${Math.round(flooded.sentBytes / ATTACK_COUNT)} B ` +
            `in ${flooded.ms} ms: ${JSON.stringify(countsOf(flooded.statuses))}; stored ${after.rows} rows, ` +
            `${after.bytes} B; table +${after.table - before.table} B, folder +${after.folder - before.folder} B; ` +
            `healthz ${JSON.stringify(health)}`,
        );

      it("from a key no operator registered as a partner: all refused 403 saying how to register, nothing stored, the disk unchanged", async () => {
        const stranger = await caller(gw.app, "stranger", false);
        const before = await footprint(stranger.sender);
        const stop = watchAsVictim(gw.url);
        const flooded = await attack(stranger.key);
        const health = await stop();
        const after = await footprint(stranger.sender);
        report("not a partner", flooded, before, after, health);

        expect(flooded.sentBytes / ATTACK_COUNT).toBeCloseTo(ATTACK_BYTES, -3);
        expect(countsOf(flooded.statuses)).toEqual({ 403: ATTACK_COUNT });
        const message = messageIn(flooded.first[403]!.body);
        expect(message).toContain("ACCESS_DENIED");
        expect(message).toContain(`npm run admin -- partner:add --server`);
        expect(message).toContain(`--client ${stranger.clientId}`);
        expect([after.rows, after.bytes, after.table]).toEqual([0, 0, before.table]);
        expect(await spentOf(gw.app, stranger.sender)).toBeUndefined();
        // Nothing is written for a refusal: less than one WAL segment (16 MiB), where storing them all
        // would be ATTACK_COUNT × 247 KB (99 MB in the full suite, 20 MB in the gate).
        expect(after.folder - before.folder).toBeLessThan(16 * 1024 * 1024);
        expectVictimServed(health, { minPolls: 3 }); // the floods last seconds: several polls see them
      }, 180_000);

      it("from a partner: stored until ONE_RECORD_NOTIFICATION_BYTES_PER_DAY, then 429 with Retry-After to midnight UTC; the bytes on disk within the quota", async () => {
        const partner = await caller(gw.app, "partner", true);
        const before = await footprint(partner.sender);
        const stop = watchAsVictim(gw.url);
        const flooded = await attack(partner.key);
        const health = await stop();
        const after = await footprint(partner.sender);
        report("a partner", flooded, before, after, health);

        // Stored as sent (the remarks kept as they came), until one more would pass the quota; each
        // stored row's text is the stored JSON-LD, give or take a space after each ":" and ",".
        const accepted = flooded.statuses.filter((status) => status === 204).length;
        expect(countsOf(flooded.statuses)).toEqual({ 204: accepted, 429: ATTACK_COUNT - accepted });
        expect(after.rows).toBe(accepted);
        const each = after.bytes / after.rows;
        expect(each).toBeGreaterThan(ATTACK_BYTES * 0.98);
        expect(after.bytes).toBeLessThanOrEqual(BYTES_PER_DAY + after.rows * 200);
        expect(after.bytes + each).toBeGreaterThan(BYTES_PER_DAY);
        expect(await spentOf(gw.app, partner.sender)).toEqual({ count: accepted, bytes: expect.any(Number) });
        const retryAfter = Number(flooded.first[429]!.retryAfter);
        expect(Math.abs(retryAfter - secondsToMidnight())).toBeLessThan(60);
        const message = messageIn(flooded.first[429]!.body);
        expect(message).toContain("QUOTA_EXCEEDED");
        expect(message).toContain("ONE_RECORD_NOTIFICATION_BYTES_PER_DAY");
        // On disk: random text does not compress, so the table grows by what was stored, pages and
        // index entries aside (5%); never by what was refused.
        expect(after.table - before.table).toBeLessThan(BYTES_PER_DAY * 1.05);
        expectVictimServed(health, { minPolls: 3 }); // the floods last seconds: several polls see them
      }, 300_000);
    });

    describe("with ONE_RECORD_NOTIFICATIONS_PER_DAY=10", () => {
      const PER_DAY = 10;
      let gw: Gateway;
      let partner: Awaited<ReturnType<typeof caller>>;
      beforeAll(async () => {
        gw = await gateway(backend, disposers, { ONE_RECORD_NOTIFICATIONS_PER_DAY: String(PER_DAY) });
        partner = await caller(gw.app, "counted", true);
      }, 120_000);

      const post = (id: string, body: unknown = notification()) =>
        oneRecord(`${gw.base}/notifications`, { token: partner.key, headers: { "notification-id": id }, body });

      it("40 posted at once store exactly 10; a repeat is answered 204 and spends nothing; a new UTC day starts again", async () => {
        const ids = Array.from({ length: 40 }, () => randomUUID());
        const answers = await Promise.all(ids.map((id) => postUnchecked(gw.base, partner.key, id)));
        expect(countsOf(answers.map((answer) => answer.status))).toEqual({ 204: PER_DAY, 429: 40 - PER_DAY });
        expect(await rowsOf(gw.app, partner.sender)).toBe(PER_DAY);
        expect((await spentOf(gw.app, partner.sender))!.count).toBe(PER_DAY);
        const refused = await post(randomUUID());
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(messageOf(refused)).toContain("ONE_RECORD_NOTIFICATIONS_PER_DAY");

        // A publisher retrying one whose answer it lost: stored once, 204 even with the quota spent.
        const storedId = ids[answers.findIndex((answer) => answer.status === 204)]!;
        expect((await post(storedId)).status).toBe(204);
        expect(await rowsOf(gw.app, partner.sender)).toBe(PER_DAY);

        // The day the counts are of ends: the partner is taken again.
        await gw.app.database.prisma.$executeRawUnsafe(
          "UPDATE quota_usage SET day = day - 1 WHERE quota = $1 AND subject = $2",
          QUOTA_NAME,
          partner.sender,
        );
        expect((await post(randomUUID())).status).toBe(204);
        expect(await spentOf(gw.app, partner.sender)).toMatchObject({ count: 1 });
      }, 120_000);

      it("refuses a notification whose stored form is over MAX_STORED_NOTIFICATION_BYTES (413), a small body of long IRIs included; nothing stored or spent", async () => {
        const before = await spentOf(gw.app, partner.sender);
        const rows = await rowsOf(gw.app, partner.sender);
        // 57 KB as sent: ten terms for IRIs of 5,000 characters, each used 90 times.
        const terms = Object.fromEntries(
          Array.from({ length: 10 }, (_, i) => [`p${i}`, `https://1r.publisher.test/${"a".repeat(5_000)}${i}`]),
        );
        const body = notification({
          "@context": { api: API, ...terms },
          "https://1r.publisher.test/ns#parts": Array.from({ length: 90 }, () =>
            Object.fromEntries(Object.keys(terms).map((term) => [term, 1])),
          ),
        });
        expect(JSON.stringify(body).length).toBeLessThan(60_000);
        const res = await post(randomUUID(), body);
        expect(res.status).toBe(413);
        expect(messageOf(res)).toContain(`over the ${MAX_STORED_NOTIFICATION_BYTES / 1024} KiB`);
        expect(await rowsOf(gw.app, partner.sender)).toBe(rows);
        expect(await spentOf(gw.app, partner.sender)).toEqual(before);
      });
    });
  });
});

describeBackend("postgres")("the notification quota across two gateways on one PostgreSQL", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("20 posted at once to each of two instances store 10 in all with ONE_RECORD_NOTIFICATIONS_PER_DAY=10", async () => {
    const settings = { ONE_RECORD_NOTIFICATIONS_PER_DAY: "10" };
    const first = await gateway("postgres", disposers, settings);
    const second = await gateway("postgres", disposers, { ...settings, DATABASE_URL: first.env.DATABASE_URL! });
    const partner = await caller(first.app, "two-instances", true);
    const answers = await Promise.all(
      [first, second].flatMap((gw) =>
        Array.from({ length: 20 }, () => postUnchecked(gw.base, partner.key, randomUUID())),
      ),
    );
    expect(answers.filter((answer) => answer.status === 204)).toHaveLength(10);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(30);
    expect(await rowsOf(first.app, partner.sender)).toBe(10);
  }, 120_000);
});

describe("on the embedded database, which has no checkpointer", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("checkpoints its log once EMBEDDED_VACUUM_ROWS KiB of notifications are stored", async () => {
    const gw = await gateway("pglite", disposers, { EMBEDDED_VACUUM_ROWS: "1000" });
    const partner = await caller(gw.app, "checkpointed", true);
    const checkpointAt = async () =>
      (
        await gw.app.database.prisma.$queryRawUnsafe<Array<{ lsn: string }>>(
          "SELECT checkpoint_lsn::text AS lsn FROM pg_control_checkpoint()",
        )
      )[0]!.lsn;
    const before = await checkpointAt();
    // 5 × 247 KB: 1,200 KiB stored, past the 1,000 that start a round of upkeep.
    const flooded = await flood({
      url: `${gw.base}/notifications`,
      key: partner.key,
      count: 5,
      bytes: ATTACK_BYTES,
      inFlight: 1,
    });
    expect(flooded.statuses).toEqual([204, 204, 204, 204, 204]);
    await until(async () => (await checkpointAt()) !== before, { what: "a checkpoint after the notifications" });
  }, 120_000);
});

import { describeBackend, Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";
import { startPgWireCounter } from "./support/pg-wire-counter";
import { createPostgresDatabase } from "./support/postgres";
import { startReceiver } from "./support/receiver";

const AWB = "020-12345675";

/**
 * What each subscription operation costs the database, counted on the wire between the gateway and
 * PostgreSQL (a proxy reads the protocol; nothing is mocked): round trips, and which statements.
 */
describeBackend("postgres")("subscription round trips, counted on the wire to PostgreSQL", () => {
  const disposers = new Disposers();
  let counter: Awaited<ReturnType<typeof startPgWireCounter>>;
  let app: Awaited<ReturnType<typeof startApp>>["app"];
  let base: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    counter = await startPgWireCounter(database.url);
    disposers.add(() => counter.close());
    // No delivery worker: its polling would be counted too.
    let url: string;
    ({ app, url } = await startApp("postgres", disposers, {
      DATABASE_URL: counter.url,
      RATE_LIMIT_PER_SECOND: "0",
      DELIVERY_WORKER: "false",
    }));
    base = `${url}/carrier/handling/shipment/subscribe`;
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  async function keyOf(name: string): Promise<{ clientId: string; key: string }> {
    const { clientId } = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
    const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
    return { clientId, key };
  }

  /** Runs `request` and answers its status with the round trips and statements it cost. */
  async function counted(request: () => Promise<{ status: number }>) {
    counter.reset();
    const { status } = await request();
    return { status, roundTrips: counter.roundTrips(), statements: counter.statements() };
  }

  it("costs two round trips to create, one to read, update in place, list or delete, two to move the callback", async () => {
    const { key } = await keyOf("round trips");
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const send = (method: string, path: string, body?: unknown) =>
      getJson(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    expect((await send("GET", "")).status).toBe(200); // the key is remembered from here on

    const create = await counted(() => send("POST", "", { awb: AWB, callback: `${receiver.url}/ok/rt`, states: "*" }));
    // The checks before the callback's OPTIONS (one statement), then the capped insert (one script,
    // which first takes the place of an expired subscription of the same AWB and callback).
    expect(create).toMatchObject({ status: 201, roundTrips: 2 });
    expect(create.statements[1]).toMatch(
      /^SELECT 1 FROM client .* FOR NO KEY UPDATE;\s*UPDATE delivery .*DELETE FROM subscription .*WITH counted/s,
    );
    const id = ((await send("GET", "")).body as Array<{ subscriptionId: string }>)[0]!.subscriptionId;

    expect(await counted(() => send("GET", `/${id}`))).toMatchObject({ status: 200, roundTrips: 1 });
    expect(await counted(() => send("GET", ""))).toMatchObject({ status: 200, roundTrips: 1 });
    expect(
      await counted(() => send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/ok/rt`, States: "DEP" })),
    ).toMatchObject({ status: 200, roundTrips: 1 });
    expect(
      await counted(() => send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/ok/rt/moved`, States: "DEP" })),
    ).toMatchObject({ status: 200, roundTrips: 2 });
    expect(await counted(() => send("DELETE", `/${id}`))).toMatchObject({ status: 204, roundTrips: 1 });
    expect(await counted(() => send("GET", `/${id}`))).toMatchObject({ status: 404, roundTrips: 1 });
  });

  it("reads a key that is not remembered once for many concurrent requests, then not at all", async () => {
    const { key } = await keyOf("one lookup");
    const headers = { authorization: `Bearer ${key}` };
    const keyReads = (statements: string[]) => statements.filter((s) => /FROM "public"\."api_key"/.test(s)).length;

    const burst = await counted(async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, () => getJson(base, { headers })));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      return { status: 200 };
    });
    expect(keyReads(burst.statements)).toBe(1);
    const again = await counted(() => getJson(base, { headers }));
    expect(keyReads(again.statements)).toBe(0);
  });
});

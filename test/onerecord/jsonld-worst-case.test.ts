import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import jsonld from "jsonld";
import type { App } from "../../src/app";
import type { Scope } from "../../src/clients/credentials";
import { MAX_DELEGATED_OBJECTS } from "../../src/onerecord/delegations/access-delegation";
import { MAX_JSON_LD_VALUES } from "../../src/onerecord/jsonld-bounds";
import { readJsonLdNodes } from "../../src/onerecord/jsonld-codec";
import { MAX_CHANGE_OPERATIONS, MAX_CHANGE_REQUEST_BYTES } from "../../src/onerecord/objects/change-bounds";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { newEmbeddedDataDir } from "../support/embedded-data-dirs";
import { ADMIN_KEY, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { EX, type Json, WORST_SHAPES, worstBody } from "../support/jsonld-worst-bodies";
import { type ServerProcess, spawnServer } from "../support/process";
import { processCpuMs } from "../support/process-cpu";
import { itInFullSuite } from "../support/suite";
import { HEALTHZ_WITHIN_MS } from "../support/victim";
import { API, CARGO, XSD } from "../support/onerecord-vocabulary";

/**
 * What the costliest JSON-LD body the bounds admit costs the gateway, on every route that reads one
 * (docs/SECURITY.md "What one JSON-LD body may cost"): the whole request, read, validated, stored and
 * answered, in the CPU of the gateway's process. The gateway runs as `npm start` runs it, a process of
 * its own: in Jest's module sandbox jsonld.js's value comparisons run about ten times slower
 * (Object.prototype.toString there), which would measure Jest, not the gateway.
 */
const AWB = "020-12345675";
/** The bound every body inside the limits must stay within (docs/SECURITY.md). */
const WORST_REQUEST_CPU_MS = 100;
/**
 * Requests measured per body, after one that warms the code up. The least of them is the body's cost:
 * what else runs on the machine only adds to a request's CPU (and on a virtual machine, time the host
 * gave another is charged to whatever ran); the median is reported beside it.
 */
const MEASURED = 5;
/** A stand-in replaced in each request by a new UUID (as long), so no request repeats another. */
const NONCE = "00000000-0000-4000-8000-000000000000";
/** Pieces made for change requests (one each: an object takes at most 20 pending) and delegations. */
const PIECES = 150;

interface Route {
  readonly name: string;
  readonly method: "POST" | "PATCH";
  /** Where the `i`th request goes. */
  readonly url: (i: number) => string;
  readonly token: () => string;
  /** The smallest body the route takes, which every shape is added to. */
  readonly base: () => Json;
  /** Bodies only this route takes at their cost's bound. */
  readonly own?: () => Record<string, Json>;
  /** A request's body from the body measured (a fresh nonce, and for a change its fresh target). */
  readonly vary?: (text: string, i: number) => string;
}

interface Measured {
  readonly route: string;
  readonly shape: string;
  readonly status: number;
  /** The least CPU of the MEASURED requests, in ms: the body's cost. */
  readonly cpuMs: number;
  readonly medianCpuMs: number;
  readonly bytes: number;
  readonly message: string;
}

/**
 * A request written to its own connection but for the last byte of its body; `release` sends that
 * byte, `status` resolves with the answer's status once the server has answered and closed.
 */
async function heldRequest(method: string, url: string, token: string, body: string) {
  const { hostname, port, pathname } = new URL(url);
  const bytes = Buffer.from(body);
  const head =
    `${method} ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${token}\r\n` +
    `accept: application/ld+json\r\ncontent-type: application/ld+json\r\ncontent-length: ${bytes.length}\r\n` +
    "connection: close\r\n\r\n";
  const socket = connect(Number(port), hostname);
  let answer = "";
  socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
  const status = new Promise<number>((resolve, reject) => {
    socket.on("error", reject);
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
  });
  await new Promise<void>((resolve) =>
    socket.write(Buffer.concat([Buffer.from(head), bytes.subarray(0, -1)]), () => resolve()),
  );
  return { status, release: () => socket.write(bytes.subarray(-1)) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const messageOf = (text: string): string => {
  try {
    const body = JSON.parse(text) as Json;
    const details = body["api:hasErrorDetail"];
    const message = ((Array.isArray(details) ? details[0] : details) as Json | undefined)?.["api:hasMessage"];
    return typeof message === "string" ? message : "";
  } catch {
    return "";
  }
};

describe("the costliest JSON-LD bodies the bounds admit", () => {
  const disposers = new Disposers();
  let server: ServerProcess;
  let base: string;
  const keys = { writer: "", subscriber: "" };
  let subscriberOrganization = "";
  const pieceIds: string[] = [];
  let nextPiece = 0;
  const piece = (i: number) => `${base}/logistics-objects/${pieceIds[i]}`;
  const results: Measured[] = [];

  beforeAll(async () => {
    const { dir, remove } = await newEmbeddedDataDir();
    disposers.add(remove);
    // The clients, the partner and the objects are made by an app in this process, on the data folder
    // the server then opens.
    const setup = new Disposers();
    const quotas = {
      RATE_LIMIT_PER_SECOND: "0",
      ONE_RECORD_CHANGE_REQUEST_BYTES_PER_DAY: String(2 ** 40),
      ONE_RECORD_CHANGE_REQUESTS_PER_DAY: "1000000",
      ONE_RECORD_DELEGATES_PER_OBJECT: "100000",
      ONE_RECORD_NOTIFICATION_BYTES_PER_DAY: String(2 ** 40),
      ONE_RECORD_NOTIFICATIONS_PER_DAY: "10000000",
    };
    let env: Record<string, string>;
    try {
      let app: App;
      let url: string;
      ({ app, url, env } = await startApp("pglite", setup, { DATA_DIR: dir, ...quotas }));
      const newClient = async (...scopes: Scope[]) => {
        const { clientId } = await app.services.clients.createClient({
          name: scopes.join(" "),
          callbackPrefixes: ["*"],
        });
        return { clientId, key: (await app.services.clients.issueKey(clientId, scopes)).key };
      };
      keys.writer = (await newClient("objects:write", "events:read", "events:write")).key;
      // The subscriber: a key whose only scope is `subscriptions`, its client a registered partner.
      const subscriber = await newClient("subscriptions");
      keys.subscriber = subscriber.key;
      subscriberOrganization = `organization-${subscriber.clientId}`;
      await createPartnerAdmin(app.database.prisma, undefined).add({
        serverUrl: "http://127.0.0.1:9/onerecord",
        clientId: subscriber.clientId,
      });
      for (let made = 0; made < PIECES; made += 10)
        pieceIds.push(
          ...(await Promise.all(
            Array.from({ length: 10 }, async () => {
              const res = await fetch(`${url}/onerecord/logistics-objects`, {
                method: "POST",
                headers: { authorization: `Bearer ${keys.writer}`, "content-type": "application/ld+json" },
                body: JSON.stringify({ "@context": { cargo: CARGO }, "@type": "cargo:Piece" }),
              });
              expect(res.status).toBe(201);
              return res.headers.get("location")!.split("/").pop()!;
            }),
          )),
        );
      const milestone = { awb: AWB, state: "DEP", timestamp: "2026-11-21T08:00:00Z", station: "FRA", flight: "LH8160" };
      const ingested = await postJson(`${url}/carrier/handling/shipment/events`, milestone, {
        authorization: `Bearer ${ADMIN_KEY}`,
      });
      expect(ingested.status).toBe(202);
    } finally {
      await setup.disposeAll();
    }
    server = await spawnServer({ ...env, ...quotas, LOG_LEVEL: "info" }, 90_000, { watchLoop: true });
    disposers.add(async () => {
      server.child.kill("SIGTERM");
      await server.exited;
    });
    base = `${server.url}/onerecord`;
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  const context = { cargo: CARGO, api: API, xsd: XSD };
  const withNonce = (text: string) => text.split(NONCE).join(randomUUID());
  /** A change's requests each go to a piece of their own, which holds no other pending request. */
  const ownTarget = (text: string) => {
    const target = piece(nextPiece++ % PIECES);
    return withNonce(text.split(piece(0)).join(target));
  };
  const change = (operations: number, value: string): Json => ({
    "@context": context,
    "@type": "api:Change",
    "api:hasLogisticsObject": { "@id": piece(0) },
    "api:hasDescription": NONCE,
    "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "1" },
    "api:hasOperation": Array.from({ length: operations }, (_, i) => ({
      "@type": "api:Operation",
      "api:op": { "@id": "api:ADD" },
      "api:s": piece(0),
      // One of a Piece's few properties that take any number of values.
      "api:p": `${CARGO}shippingMarks`,
      "api:o": { "@type": "api:OperationObject", "api:hasDatatype": `${XSD}string`, "api:hasValue": `${i}${value}` },
    })),
  });

  const routes: Route[] = [
    {
      name: "POST logistics-objects",
      method: "POST",
      url: () => `${base}/logistics-objects`,
      token: () => keys.writer,
      base: () => ({ "@context": context, "@type": "cargo:Piece", [`${EX}nonce`]: NONCE }),
    },
    {
      name: "PATCH logistics-objects/{id}",
      method: "PATCH",
      url: () => piece(nextPiece % PIECES),
      token: () => keys.writer,
      base: () => change(1, "books"),
      own: () => ({
        // Every operation a Change may hold, with most of the text its stored size allows (a stored
        // operation takes about 1 KB besides its value).
        operations: change(
          MAX_CHANGE_OPERATIONS,
          "x".repeat(Math.floor((0.8 * MAX_CHANGE_REQUEST_BYTES) / MAX_CHANGE_OPERATIONS) - 1_000),
        ),
      }),
      vary: ownTarget,
    },
    {
      name: "POST logistics-events",
      method: "POST",
      url: () => `${base}/logistics-objects/shipment-${AWB}/logistics-events`,
      token: () => keys.writer,
      base: () => ({
        "@context": context,
        "@type": "cargo:LogisticsEvent",
        "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-16T15:45:00Z" },
        [`${EX}nonce`]: NONCE,
      }),
    },
    {
      name: "POST subscriptions",
      method: "POST",
      url: () => `${base}/subscriptions`,
      token: () => keys.subscriber,
      base: () => ({
        "@context": context,
        "@type": "api:Subscription",
        "api:hasContentType": "application/ld+json",
        "api:hasDescription": NONCE,
        "api:hasSubscriber": { "@id": `${base}/logistics-objects/${subscriberOrganization}` },
        "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
        "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_OBJECT_UPDATED" }],
        "api:hasTopic": { "@type": "xsd:anyURI", "@value": piece(0) },
      }),
    },
    {
      name: "POST access-delegations",
      method: "POST",
      url: () => `${base}/access-delegations`,
      token: () => keys.writer,
      base: () => ({
        "@context": context,
        "@type": "api:AccessDelegation",
        "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": "api:GET_LOGISTICS_EVENT" }],
        "api:isRequestedFor": [{ "@id": `https://delegate.example/${NONCE}` }],
        "api:notifyRequestStatusChange": false,
        "api:hasLogisticsObject": [{ "@id": piece(1) }],
      }),
      own: () => ({
        // Every object a delegation may name: each looked up, locked and granted.
        objects: {
          ...routes[4]!.base(),
          "api:hasLogisticsObject": Array.from({ length: MAX_DELEGATED_OBJECTS }, (_, i) => ({ "@id": piece(i) })),
        },
      }),
      vary: withNonce,
    },
    {
      name: "POST notifications",
      method: "POST",
      url: () => `${base}/notifications`,
      token: () => keys.subscriber,
      base: () => ({
        "@context": context,
        "@type": "api:Notification",
        "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
        "api:hasLogisticsObject": { "@id": `https://1r.publisher.test/logistics-objects/${NONCE}` },
      }),
    },
  ];

  /** Every body measured on a route: its own base and each shape at its bound. */
  const bodiesOf = (route: Route): Record<string, Json> => ({
    base: route.base(),
    ...Object.fromEntries(Object.entries(WORST_SHAPES).map(([name, shape]) => [name, worstBody(route.base(), shape)])),
  });

  const send = async (route: Route, text: string, i: number) => {
    const res = await fetch(route.url(i), {
      method: route.method,
      headers: {
        authorization: `Bearer ${route.token()}`,
        accept: "application/ld+json",
        "content-type": "application/ld+json",
      },
      body: (route.vary ?? withNonce)(text, i),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, text: await res.text() };
  };

  /** The body's cost: the server's CPU for each of MEASURED requests, after one unmeasured. */
  const measure = async (route: Route, shape: string, body: Json): Promise<Measured> => {
    const text = JSON.stringify(body);
    await send(route, text, 0);
    const spent: number[] = [];
    let answer = { status: 0, text: "" };
    for (let i = 1; i <= MEASURED; i++) {
      const before = processCpuMs(server.child.pid!);
      answer = await send(route, text, i);
      spent.push(processCpuMs(server.child.pid!) - before);
    }
    return {
      route: route.name,
      shape,
      status: answer.status,
      cpuMs: Math.min(...spent),
      medianCpuMs: median(spent),
      bytes: text.length,
      message: messageOf(answer.text),
    };
  };

  it("builds each shape at its bound: a tenth more is refused before it is read", async () => {
    const admitted: string[] = [];
    for (const route of routes)
      for (const [name, shape] of Object.entries(WORST_SHAPES)) {
        const refusal = await readJsonLdNodes(worstBody(route.base(), shape, 1.1)).then(
          () => "",
          (error: Error) => error.message,
        );
        if (!/more than this server reads in one request: .*\((MAX_JSON_LD_[A-Z_]+|MAX_CONTEXT_TERMS)/.test(refusal))
          admitted.push(`${route.name} ${name}: ${refusal || "read"}`);
      }
    expect(admitted).toEqual([]);
  }, 60_000);

  it("reads a body as jsonld.flatten() does, without expanding it twice", async () => {
    for (const body of Object.values(bodiesOf(routes[0]!)))
      expect(await readJsonLdNodes(structuredClone(body))).toEqual(await jsonld.flatten(body as jsonld.JsonLdDocument));
  }, 60_000);

  const table = (measured: Measured[]) =>
    measured
      .map(
        (r) =>
          `${r.route.padEnd(30)} ${r.shape.padEnd(16)} ${String(r.status).padEnd(4)} ${r.cpuMs.toFixed(1).padStart(6)} ms (median ${r.medianCpuMs.toFixed(1).padStart(6)}) ${String(r.bytes).padStart(7)} B ${r.message.slice(0, 60)}`,
      )
      .join("\n");

  // CPU thresholds are measurements: the full suite asserts them (a loaded gate machine moves them).
  itInFullSuite(
    `costs at most ${WORST_REQUEST_CPU_MS} ms of the gateway's CPU on every JSON-LD route, whatever the body inside the bounds`,
    async () => {
      for (const route of routes)
        for (const [shape, body] of Object.entries(bodiesOf(route))) {
          const measured = await measure(route, shape, body);
          results.push(measured);
          // Inside the bounds: read in full, whatever the route then answers; never a 5xx.
          expect({
            shape: `${route.name} ${shape}`,
            refusedAsCostly: /more than this server reads/.test(measured.message),
          }).toEqual({
            shape: `${route.name} ${shape}`,
            refusedAsCostly: false,
          });
          expect(measured.status).toBeLessThan(500);
        }
      console.log(`CPU per request (least of ${MEASURED}):\n${table(results)}`);
      const over = results.filter((r) => r.cpuMs > WORST_REQUEST_CPU_MS);
      expect(over.map((r) => `${r.route} ${r.shape}: ${r.cpuMs.toFixed(0)} ms`)).toEqual([]);
    },
    600_000,
  );

  itInFullSuite(
    `costs at most ${WORST_REQUEST_CPU_MS} ms for the largest body of a route's own bounds: a Change of every operation, a delegation of every object`,
    async () => {
      const measured: Measured[] = [];
      for (const route of routes)
        for (const [shape, body] of Object.entries(route.own?.() ?? {}))
          measured.push(await measure(route, shape, body));
      console.log(`CPU per request (least of ${MEASURED}):\n${table(measured)}`);
      expect(measured.map((r) => [r.route, r.shape, r.status])).toEqual([
        ["PATCH logistics-objects/{id}", "operations", 201],
        ["POST access-delegations", "objects", 201],
      ]);
      const over = measured.filter((r) => r.cpuMs > WORST_REQUEST_CPU_MS);
      expect(over.map((r) => `${r.route} ${r.shape}: ${r.cpuMs.toFixed(0)} ms`)).toEqual([]);
    },
    120_000,
  );

  it("refuses flat arrays of 9,990 strings at once, naming the bound: 9,990 descriptions of a subscription (89 KB), 9,990 shipping marks of a Piece", async () => {
    // Nothing but the context, the type and the 9,990 short strings.
    const strings = Array.from({ length: 9_990 }, (_, i) => `d${String(i).padStart(5, "0")}`);
    const subscription = { "@context": { api: API }, "@type": "api:Subscription", "api:hasDescription": strings };
    expect(JSON.stringify(subscription).length).toBeGreaterThan(89_000);
    const piece = { "@context": { cargo: CARGO }, "@type": "cargo:Piece", "cargo:shippingMarks": strings };
    for (const [route, body] of [
      [routes[3]!, subscription],
      [routes[0]!, piece],
    ] as const) {
      const measured = await measure(route, "flat strings", body);
      console.log(`9,990 flat strings: ${table([measured])}`);
      expect([measured.status, measured.message]).toEqual([
        400,
        expect.stringContaining(`more than ${MAX_JSON_LD_VALUES} JSON values (MAX_JSON_LD_VALUES)`),
      ]);
      expect(measured.cpuMs).toBeLessThan(WORST_REQUEST_CPU_MS);
    }
  }, 60_000);

  it("holds no place in line for a client that gave up waiting: the bodies after it are read", async () => {
    const objects = routes[0]!;
    const text = JSON.stringify(worstBody(objects.base(), WORST_SHAPES.keys!));
    const given = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        fetch(objects.url(i), {
          method: "POST",
          headers: { authorization: `Bearer ${keys.writer}`, "content-type": "application/ld+json" },
          body: withNonce(text),
          // Most give up while they wait in line (each request takes tens of ms): their places must not stay held.
          ...(i < 2 ? {} : { signal: AbortSignal.timeout(5 + i) }),
        }).then(
          (res) => res.status,
          (error: Error) => error.name,
        ),
      ),
    );
    expect(given.filter((answer) => answer === "TimeoutError").length).toBeGreaterThan(2);
    // Had two given-up requests kept their places, these would wait for ever (15 s each, then fail).
    const after = await Promise.all(
      Array.from({ length: 4 }, (_, i) => send(objects, JSON.stringify(objects.base()), 200 + i)),
    );
    expect(after.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
  }, 60_000);

  it(`answers /healthz within ${HEALTHZ_WITHIN_MS} ms while twenty of the costliest bodies arrive at the same instant`, async () => {
    // The costliest body measured above (else the objects route's keys shape), twenty times.
    const costliest = [...results].sort((a, b) => b.cpuMs - a.cpuMs).find((r) => r.shape in WORST_SHAPES);
    const route = routes.find((r) => r.name === costliest?.route) ?? routes[0]!;
    const text = JSON.stringify(bodiesOf(route)[costliest?.shape ?? "keys"]);
    // Sent but for their last byte, then the twenty last bytes at once: the gateway finds every body
    // complete on the same turn of its event loop, as an attacker would arrange.
    const requests = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        heldRequest(route.method, route.url(100 + i), route.token(), (route.vary ?? withNonce)(text, 100 + i)),
      ),
    );
    // What another caller waits for is the longest the gateway held its event loop, in its main thread's
    // CPU (a loaded machine stretches the wall clock, not that); /healthz is polled throughout, each
    // poll's wall-clock time reported beside it.
    await server.loop!.reset();
    const polls: number[] = [];
    let polling = true;
    let firstPolled!: () => void;
    const polledOnce = new Promise<void>((resolve) => (firstPolled = resolve));
    const poller = (async () => {
      while (polling) {
        const started = performance.now();
        const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(15_000) });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        polls.push(performance.now() - started);
        firstPolled();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    // The bodies complete once the poller is under way (its first answer in), so polls span the burst.
    await Promise.race([polledOnce, poller]);
    for (const request of requests) request.release();
    const statuses = await Promise.all(requests.map((request) => request.status));
    polling = false;
    await poller;
    const held = await server.loop!.read();
    expect(statuses.filter((status) => !(status >= 200 && status < 500))).toEqual([]);
    expect(polls.length).toBeGreaterThan(1);
    console.log(
      `/healthz, ${polls.length} polls: the loop held at most ${held.cpuMs} ms of the gateway's CPU (${held.wallMs} ms of wall clock) of the ${held.spentCpuMs} ms it spent; the slowest poll ${Math.max(...polls).toFixed(0)} ms of wall clock`,
    );
    expect({ ...held, under: held.cpuMs < HEALTHZ_WITHIN_MS }).toEqual({ ...held, under: true });
    // And the bodies were worked through a few at a time (onerecord/body-gate.ts), other requests
    // answered between them: the longest hold is a small part of the burst's work on the loop (6-9 %
    // measured; let in all at once, 38-40 %), a share a loaded machine does not change.
    expect({ ...held, share: held.cpuMs / held.spentCpuMs < 1 / 6 }).toEqual({ ...held, share: true });
  }, 120_000);
});

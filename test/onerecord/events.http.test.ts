/**
 * The ONE Record events API over real HTTP on both databases: an AWB's milestones and carrier statuses
 * read as its Shipment's logistics events (an FSU's part shipment with pieces and weight), the list's
 * filters and paging, HEAD's Last-Modified, one event, and posting events — a milestone reaching a
 * callback subscriber and a live subscriber once, whatever the retries; other events kept as posted.
 * Every body the server answers is checked against the ONE Record shapes.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { type Client, createClient } from "graphql-ws";
import WebSocket from "ws";
import jsonld from "jsonld";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { assertConforms } from "../support/onerecord-conformance";
import { MAX_EVENTS_PAGE_BYTES, MAX_POSTED_EVENT_BYTES } from "../../src/onerecord/events/events.service";
import { oneRecord, type OneRecordAnswer } from "../support/onerecord-requests";
import { startReceiver } from "../support/receiver";
import { until } from "../support/webhooks";
import { liveSubscriptions, liveSubscriptionsRunning } from "../support/ws-protocol";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const STATUS = "https://onerecord.iata.org/ns/code-lists/StatusCode#";
const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const fixture = (name: string) => readFileSync(path.join(__dirname, "..", "fixtures", name), "utf8");

let serial = 3_100_000;
/** A fresh AWB with a valid check digit. */
const nextAwb = () => {
  const s = String(++serial);
  return `020-${s}${Number(s) % 7}`;
};

/** The items of a Collection as a list, whatever the count (none, one, several). */
const itemsOf = (collection: any): any[] =>
  collection["api:hasItem"] === undefined
    ? []
    : Array.isArray(collection["api:hasItem"])
      ? collection["api:hasItem"]
      : [collection["api:hasItem"]];

const departure = (overrides: Record<string, unknown> = {}) => ({
  "@context": { cargo: CARGO },
  "@type": "cargo:StatusUpdateEvent",
  "cargo:eventCode": { "@id": `${STATUS}DEP` },
  "cargo:eventDate": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2026-10-16T15:45:00Z" },
  "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
  ...overrides,
});

describe.each(BEHAVIOUR_BACKENDS)("ONE Record logistics events on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let base: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app, url } = await startApp(backend, disposers, {
        DELIVERY_POLL_MS: "50",
        RATE_LIMIT_PER_SECOND: "0",
      }));
      base = `${url}/onerecord`;
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const shipment = (awb: string) => `${base}/logistics-objects/shipment-${awb}`;
    const events = (awb: string, query = "") => `${shipment(awb)}/logistics-events${query}`;
    /** A GET (or other) with the admin key, its body checked against the shapes when it has one. */
    const read = async (target: string, init: Parameters<typeof oneRecord>[1] = {}): Promise<OneRecordAnswer> => {
      const answer = await oneRecord(target, { token: ADMIN_KEY, ...init });
      if (answer.body !== undefined) await assertConforms(answer.body);
      return answer;
    };
    const post = (awb: string, body: unknown, token: string = ADMIN_KEY) =>
      oneRecord(events(awb), { method: "POST", body, token });
    const ingest = (body: unknown) => postJson(`${url}/carrier/handling/shipment/events`, body, admin);
    const sendFsu = async (text: string) => {
      const answer = await fetch(`${url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers: { ...admin, "content-type": "text/plain" },
        body: text,
      });
      expect(answer.status).toBe(202);
    };

    it("reads an FSU's part shipment as StatusUpdateEvents with pieces and weight, and its FOH too", async () => {
      const awb = nextAwb();
      const message = fixture("fsu/part-shipment.txt").replace("020-12345675", awb);
      await sendFsu(`${message}FOH/15OCT1500/FRA/T10K500\n`);
      const list = await read(events(awb));
      expect(list.status).toBe(200);
      expect(list.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(list.body).toMatchObject({
        "@id": events(awb),
        "@type": "api:Collection",
        "api:hasTotalItems": 4,
      });
      const items = itemsOf(list.body);
      expect(items.map((e) => e["cargo:eventCode"]["@id"].replace(STATUS, ""))).toEqual(["FOH", "RCS", "DEP", "DEP"]);
      const [, rcs, dep] = items; // one message: in the order they happened
      expect(dep).toMatchObject({
        "@type": ["cargo:StatusUpdateEvent", "cargo:LogisticsEvent"],
        "cargo:eventDate": { "@value": "2026-10-16T15:45:00Z" },
        "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
        "cargo:eventFor": { "@id": shipment(awb) },
        "cargo:eventLocation": { "@id": `${base}/logistics-objects/location-FRA` },
        "cargo:partialEventIndicator": true,
        "cargo:recordedPieceCount": 4,
        "cargo:recordedWeight": {
          "@type": "cargo:Value",
          "cargo:numericalValue": { "@value": 200 },
          "cargo:unit": { "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" },
        },
        "cargo:transportMovementReference": { "@id": `${base}/logistics-objects/transport-movement-lh400-2026-10-16` },
      });
      expect(rcs).toMatchObject({ "cargo:partialEventIndicator": false, "cargo:recordedPieceCount": 10 });
      // Each event is at its own URI, the same body.
      const one = await read(dep["@id"]);
      expect(one.status).toBe(200);
      expect(one.headers.get("type")).toBe(`${CARGO}StatusUpdateEvent`);
      expect(one.body).toEqual({ "@context": list.body["@context"], ...dep });
    });

    it("filters by event code, time and sorts and pages, refusing a bad parameter with an api:Error", async () => {
      const awb = nextAwb();
      await ingest([
        { awb, state: "RCS", timestamp: "2026-10-15T10:00:00Z", station: "FRA" },
        { awb, state: "MAN", timestamp: "2026-10-16T10:00:00Z", station: "FRA", flight: "LH400" },
        { awb, state: "DEP", timestamp: "2026-10-16T15:45:00Z", station: "FRA", flight: "LH400" },
        { awb, state: "TOA", timestamp: "2026-10-16T16:00:00Z", toaTimestamp: "2026-10-17T05:30:00Z", station: "JFK" },
      ]);
      const codes = async (query: string) => {
        const answer = await read(events(awb, query));
        expect(answer.status).toBe(200);
        return itemsOf(answer.body).map((e) => e["cargo:eventCode"]["@id"].replace(STATUS, ""));
      };
      expect(await codes("?event-code=DEP")).toEqual(["DEP"]);
      expect(await codes(`?event-code=MAN,${encodeURIComponent(`${STATUS}RCS`)}`)).toEqual(["RCS", "MAN"]);
      expect(await codes("?event-code=ARR")).toEqual(["ARR"]); // the TOA: an expected arrival
      expect(await codes("?occurred-after=20261016T100000Z&sort=DESC-eventDate")).toEqual(["ARR", "DEP"]);
      expect(await codes("?occurred-before=20261016T100001Z&sort=ASC-eventDate")).toEqual(["RCS", "MAN"]);
      // An offset's "+" written as is (a query string decodes it as a space) or as %2B.
      expect(await codes("?occurred-before=20261016T120001+0200&sort=ASC-eventDate")).toEqual(["RCS", "MAN"]);
      expect(await codes("?occurred-before=20261016T120001%2B0200&sort=ASC-eventDate")).toEqual(["RCS", "MAN"]);
      expect(await codes("?sort=ASC-eventDate&limit=2&skip=1")).toEqual(["MAN", "DEP"]);
      const page = await read(events(awb, "?limit=1&skip=3"));
      expect(page.body["api:hasTotalItems"]).toBe(4);
      expect(itemsOf(page.body)).toHaveLength(1);
      const none = await read(events(awb, "?event-code=DLV"));
      expect(none.body).toEqual(expect.objectContaining({ "api:hasTotalItems": 0 }));
      expect(none.body["api:hasItem"]).toBeUndefined();

      for (const query of [
        "?limit=0",
        "?limit=abc",
        "?skip=-1",
        "?sort=eventDate",
        "?created-after=yesterday",
        "?event-code=",
      ]) {
        const refused = await read(events(awb, query));
        expect({ query, status: refused.status, type: refused.body["@type"] }).toEqual({
          query,
          status: 400,
          type: "api:Error",
        });
        expect(refused.body["api:hasTitle"]).toBe("Invalid query parameter request");
      }
    });

    it("moves the list's Last-Modified and ETag with every event, a new milestone included (HEAD as GET)", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS", station: "FRA" });
      const head = () => oneRecord(events(awb), { method: "HEAD", token: ADMIN_KEY });
      const first = await head();
      expect(first.status).toBe(200);
      expect(first.text).toBe("");
      expect(first.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(first.headers.get("content-language")).toBe("en-US");
      const lastModified = new Date(first.headers.get("last-modified")!);
      const get = await read(events(awb));
      // Typed as every other answer: the list is an api:Collection.
      for (const answer of [first, get])
        expect(answer.headers.get("type")).toBe("https://onerecord.iata.org/ns/api#Collection");
      expect(get.headers.get("last-modified")).toBe(first.headers.get("last-modified"));
      expect(get.headers.get("etag")).toBe(first.headers.get("etag"));
      // A milestone stored two seconds later (its received time given, so no clock is waited for).
      const later = new Date(lastModified.getTime() + 2_000);
      await app.services.milestones.ingest(
        [{ eventId: null, awb, state: "MAN", occurredAt: later, toaTimestamp: null, station: "FRA", flight: null }],
        later,
      );
      const second = await head();
      expect(new Date(second.headers.get("last-modified")!).getTime()).toBe(Math.floor(later.getTime() / 1000) * 1000);
      expect(second.headers.get("etag")).not.toBe(first.headers.get("etag"));
      // Within the same second Last-Modified cannot move; the ETag does.
      await app.services.milestones.ingest(
        [{ eventId: null, awb, state: "DEP", occurredAt: later, toaTimestamp: null, station: "FRA", flight: null }],
        later,
      );
      expect((await head()).headers.get("etag")).not.toBe(second.headers.get("etag"));
    });

    it("posts a milestone that reaches a callback and a live subscriber once, however often the POST is retried", async () => {
      expect.assertions(10);
      const awb = nextAwb();
      const subscribed = await postJson(
        `${url}/carrier/handling/shipment/subscribe`,
        { awb, callback: `${receiver.url}/ok/onerecord`, states: "*" },
        admin,
      );
      expect(subscribed.status).toBe(201);
      const live = await watchLive(url, awb, disposers);
      await live.ready;

      const body = departure({ "cargo:eventLocation": { "@id": `${base}/logistics-objects/location-FRA` } });
      const created = await post(awb, body);
      expect(created.status).toBe(201);
      expect(created.headers.get("type")).toBe(`${CARGO}StatusUpdateEvent`);
      const location = created.headers.get("location")!;
      const retried = await post(awb, body);
      expect({ status: retried.status, location: retried.headers.get("location") }).toEqual({ status: 201, location });

      // A later milestone: once it has arrived, anything the retry had sent would have come before it.
      await ingest({ awb, state: "ARR", station: "JFK" });
      const posts = () => receiver.posts.filter((p) => JSON.parse(p.body).AWB === awb);
      await until(() => posts().length === 2 && live.states.length === 2, { what: "the callbacks and live events" });
      expect(posts().map((p) => JSON.parse(p.body).State)).toEqual(["DEP", "ARR"]);
      expect(live.states).toEqual(["DEP", "ARR"]);
      const history = await postJson(
        `${url}/graphql`,
        { query: `query($a: String!) { milestones(awb: $a) { eventId state station } }`, variables: { a: awb } },
        admin,
      );
      const dep = history.body.data.milestones.find((m: { state: string }) => m.state === "DEP");
      expect(dep.station).toBe("FRA");
      expect(location).toBe(`${events(awb)}/${dep.eventId}`);

      // The event reads back as posted, at the milestone's id.
      const event = await read(location);
      expect(event.body).toMatchObject({
        "@id": location,
        "@type": ["cargo:StatusUpdateEvent", "cargo:LogisticsEvent"],
        "cargo:eventFor": { "@id": shipment(awb) },
        "cargo:eventLocation": { "@id": `${base}/logistics-objects/location-FRA` },
      });
      expect(itemsOf((await read(events(awb))).body).map((e) => e["@id"])).toContain(location);
    });

    it("keeps an event that is no milestone as posted, once, and answers it at its own URI", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS", station: "FRA" });
      const foh = departure({
        "cargo:eventCode": { "@id": `${STATUS}FOH` },
        "cargo:eventName": "Freight on hand",
        "cargo:recordedPieceCount": 3,
      });
      const postedFrom = Date.now();
      const created = await post(awb, foh);
      const postedBy = Date.now();
      expect(created.status).toBe(201);
      const location = created.headers.get("location")!;
      expect((await post(awb, foh)).headers.get("location")).toBe(location);
      // The same event in JSON-LD's other forms is the same event.
      const expanded = await jsonld.expand(foh);
      expect((await post(awb, expanded)).headers.get("location")).toBe(location);
      expect((await post(awb, await jsonld.flatten(foh))).headers.get("location")).toBe(location);
      const planned = await post(awb, departure({ "cargo:eventTimeType": { "@id": "cargo:PLANNED" } }));
      expect(planned.status).toBe(201);
      const event = await read(location);
      expect(event.body).toMatchObject({
        "@id": location,
        "cargo:eventCode": { "@id": `${STATUS}FOH` },
        "cargo:recordedPieceCount": 3,
        "cargo:eventFor": { "@id": shipment(awb) },
      });
      // creationDate: when the server stored the first POST, whatever the retries.
      const creationDate = event.body["cargo:creationDate"] as { "@type": string; "@value": string };
      expect(creationDate).toEqual({ "@type": "xsd:dateTime", "@value": expect.any(String) });
      const stored = Date.parse(creationDate["@value"]);
      expect(stored).toBeGreaterThanOrEqual(postedFrom);
      expect(stored).toBeLessThanOrEqual(postedBy);
      const list = await read(events(awb));
      expect(list.body["api:hasTotalItems"]).toBe(3);
      // Only the RCS is a milestone: nothing was delivered for the FOH nor the planned departure.
      expect(await app.database.prisma.statusEvent.count({ where: { awb } })).toBe(1);
    });

    it("answers typed literals in XSD's canonical form, however they were posted", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS", station: "FRA" });
      const posted = departure({
        "cargo:eventCode": { "@id": `${STATUS}FOH` },
        "cargo:eventDate": {
          "@type": "http://www.w3.org/2001/XMLSchema#dateTime",
          "@value": "2023-04-01T10:38:01.000Z",
        },
      });
      const created = await post(awb, posted);
      expect([created.status, created.body]).toEqual([201, undefined]);
      const event = await read(created.headers.get("location")!);
      expect(event.body["cargo:eventDate"]).toEqual({ "@type": "xsd:dateTime", "@value": "2023-04-01T10:38:01Z" });
      // What the server writes itself is canonical too: no ".000".
      expect(event.body["cargo:creationDate"]["@value"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/);
    });

    it("bounds a posted event's size, and an events page's bytes whatever limit asked", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS", station: "FRA" });
      const large = await post(awb, departure({ "cargo:eventName": "x".repeat(MAX_POSTED_EVENT_BYTES) }));
      expect(large.status).toBe(413);
      expect(large.text).toContain("MAX_POSTED_EVENT_BYTES");
      const created = await post(awb, departure({ "cargo:eventCode": { "@id": `${STATUS}FOH` } }));
      expect(created.status).toBe(201);
      const id = created.headers.get("location")!.split("/").pop()!;
      // Eight events of 330 KB, as a version without the size bound could have stored.
      for (let i = 0; i < 8; i++)
        await app.database.prisma.$executeRawUnsafe(
          `INSERT INTO logistics_event (object_id, id, event_code, event_date, creation_date, body, created_by)
           SELECT object_id, gen_random_uuid(), event_code, event_date, creation_date,
                  body || jsonb_build_object('cargo:eventName', repeat('x', 330000)), created_by
           FROM logistics_event WHERE id = $1::uuid`,
          id,
        );
      const page = await read(events(awb));
      const items = page.body["api:hasItem"] as unknown[];
      expect(page.body["api:hasTotalItems"]).toBe(10);
      expect(Buffer.byteLength(page.text)).toBeLessThan(MAX_EVENTS_PAGE_BYTES + 400_000);
      expect(items.length).toBeLessThan(10);
      // The rest is asked with skip, as hasTotalItems says there is more.
      const rest = await read(events(awb, `?skip=${items.length}`));
      expect(items.length + (rest.body["api:hasItem"] as unknown[]).length).toBeLessThanOrEqual(10);
      expect((rest.body["api:hasItem"] as unknown[]).length).toBeGreaterThan(0);
    });

    it("refuses an event without eventDate, with an unknown code, or for another object, storing nothing", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS", station: "FRA" });
      const cases: Array<[Record<string, unknown>, string]> = [
        [departure({ "cargo:eventDate": undefined }), `${CARGO}eventDate`],
        [departure({ "cargo:eventCode": { "@id": `${STATUS}TOA` } }), `${CARGO}eventCode`],
        [
          departure({ "cargo:eventFor": { "@id": `${base}/logistics-objects/shipment-020-00000000` } }),
          `${CARGO}eventFor`,
        ],
        [departure({ "cargo:eventTimeType": { "@id": "cargo:SOMETIME" } }), `${CARGO}eventTimeType`],
      ];
      for (const [body, property] of cases) {
        const refused = await post(awb, JSON.parse(JSON.stringify(body)));
        expect({ property, status: refused.status }).toEqual({ property, status: 400 });
        await assertConforms(refused.body);
        expect(refused.body["api:hasErrorDetail"]).toEqual([expect.objectContaining({ "api:hasProperty": property })]);
      }
      expect((await read(events(awb))).body["api:hasTotalItems"]).toBe(1);
    });

    it("keeps the events posted to a client's own object, readable by whoever may read the object only", async () => {
      const clients = app.services.clients;
      const owner = await clients.createClient({ name: "forwarder", callbackPrefixes: ["*"] });
      const ownerKey = (await clients.issueKey(owner.clientId, ["objects:write", "events:read", "events:write"])).key;
      const other = await clients.createClient({ name: "another forwarder", callbackPrefixes: ["*"] });
      const otherKey = (await clients.issueKey(other.clientId, ["events:read", "events:write"])).key;
      const piece = await oneRecord(`${base}/logistics-objects`, {
        token: ownerKey,
        body: { "@context": { cargo: CARGO }, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" },
      });
      expect(piece.status).toBe(201);
      const pieceUri = piece.headers.get("location")!;
      const gateIn = {
        "@context": { cargo: CARGO, xsd: "http://www.w3.org/2001/XMLSchema#" },
        "@type": "cargo:LogisticsEvent",
        "cargo:eventCode": { "@id": "https://forwarder.example/codes#GATE-IN" },
        "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-14T08:00:00Z" },
      };
      const created = await oneRecord(`${pieceUri}/logistics-events`, {
        method: "POST",
        body: gateIn,
        token: ownerKey,
      });
      expect({ status: created.status, type: created.headers.get("type") }).toEqual({
        status: 201,
        type: `${CARGO}LogisticsEvent`,
      });
      // A StatusUpdateEvent is for a Shipment only.
      const onPiece = await oneRecord(`${pieceUri}/logistics-events`, {
        method: "POST",
        body: departure(),
        token: ownerKey,
      });
      expect(onPiece.status).toBe(400);
      const list = await oneRecord(`${pieceUri}/logistics-events`, { token: ownerKey });
      await assertConforms(list.body);
      expect(list.body).toMatchObject({
        "api:hasTotalItems": 1,
        "api:hasItem": {
          "@id": created.headers.get("location"),
          "cargo:eventCode": { "@id": "https://forwarder.example/codes#GATE-IN" },
          "cargo:eventFor": { "@id": pieceUri },
        },
      });
      expect(list.headers.get("last-modified")).not.toBeNull();
      const one = await oneRecord(created.headers.get("location")!, { token: ownerKey });
      expect(one.status).toBe(200);
      await assertConforms(one.body);
      // Another client may neither read nor add to them: the object is not theirs.
      expect((await oneRecord(`${pieceUri}/logistics-events`, { token: otherKey })).status).toBe(403);
      expect((await oneRecord(created.headers.get("location")!, { token: otherKey })).status).toBe(403);
      expect(
        (await oneRecord(`${pieceUri}/logistics-events`, { method: "POST", body: gateIn, token: otherKey })).status,
      ).toBe(403);
    });

    it("answers 404 for an unknown object or event, 405 to change an event, 403 and 401 by the caller", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS", station: "FRA" });
      const unknownAwb = await read(events(nextAwb()));
      expect(unknownAwb.status).toBe(404);
      const unknownEvent = await read(`${events(awb)}/00000000-0000-4000-8000-000000000000`);
      expect(unknownEvent.status).toBe(404);
      const [rcs] = itemsOf((await read(events(awb))).body);
      for (const method of ["PUT", "PATCH", "DELETE"]) {
        const refused = await read(rcs["@id"], { method, body: departure() });
        expect({ method, status: refused.status, allow: refused.headers.get("allow") }).toEqual({
          method,
          status: 405,
          allow: "GET, HEAD",
        });
      }
      const { clientId } = await app.services.clients.createClient({ name: "no events", callbackPrefixes: ["*"] });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
      expect((await oneRecord(events(awb), { token: key })).status).toBe(403);
      expect((await post(awb, departure(), key)).status).toBe(403);
      expect((await oneRecord(events(awb))).status).toBe(401);
    });
  });
});

/** A live GraphQL subscriber of one AWB, collecting the states it receives; `ready` once it runs. */
async function watchLive(url: string, awb: string, disposers: Disposers) {
  const running = await liveSubscriptions(url);
  const client: Client = createClient({
    url: `${url.replace("http", "ws")}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  disposers.add(() => client.dispose());
  const states: string[] = [];
  client.subscribe(
    {
      query: `subscription($awb: String!) { awbStatusChanged(awb: $awb) { state } }`,
      variables: { awb },
    },
    {
      next: (value) => states.push((value.data as any).awbStatusChanged.state),
      error: (error) => states.push(`error: ${JSON.stringify(error)}`),
      complete: () => {},
    },
  );
  return { states, ready: liveSubscriptionsRunning(url, running + 1) };
}

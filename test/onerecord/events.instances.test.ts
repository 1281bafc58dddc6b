import { ADMIN_KEY, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const STATUS = "https://onerecord.iata.org/ns/code-lists/StatusCode#";
const AWB = "020-55512342";

/**
 * Two instances behind one public URL on one PostgreSQL database, as behind a balancer: an AWB's events
 * are the same from either, whichever took the milestone, and a retried POST through the other instance
 * is still one milestone.
 */
describeBackend("postgres")("ONE Record logistics events across instances (two apps, one PostgreSQL)", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("lists on one instance the milestones the other took, over REST and ONE Record, each once", async () => {
    const publicBase = "https://1r.carrier.example/onerecord";
    const first = await startApp("postgres", disposers, {
      RATE_LIMIT_PER_SECOND: "0",
      ONE_RECORD_BASE_URL: publicBase,
    });
    const second = await startApp("postgres", disposers, { ...first.env });
    const at = (app: { url: string }, uri: string) => uri.replace(publicBase, `${app.url}/onerecord`);
    const shipment = `${publicBase}/logistics-objects/shipment-${AWB}`;
    const events = `${shipment}/logistics-events`;

    const legacy = await postJson(
      `${first.url}/carrier/handling/shipment/events`,
      [{ eventId: "across-1", awb: AWB, state: "RCS", station: "FRA", timestamp: "2026-11-20T08:00:00Z" }],
      { authorization: `Bearer ${ADMIN_KEY}` },
    );
    expect(legacy.status).toBe(202);
    const departed = {
      "@context": { cargo: CARGO },
      "@id": "urn:example:event:across-2",
      "@type": "cargo:StatusUpdateEvent",
      "cargo:eventCode": { "@id": `${STATUS}DEP` },
      "cargo:eventDate": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2026-11-20T10:00:00Z" },
      "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
    };
    const posted = await oneRecord(at(first, events), { method: "POST", body: departed, token: ADMIN_KEY });
    expect(posted.status).toBe(201);
    // The client retries through the other instance: the same event, not a second milestone.
    const retried = await oneRecord(at(second, events), { method: "POST", body: departed, token: ADMIN_KEY });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("location")).toBe(posted.headers.get("location"));

    const listed = await oneRecord(at(second, events), { token: ADMIN_KEY });
    expect(listed.status).toBe(200);
    expect(listed.body["@id"]).toBe(events);
    expect(listed.body["api:hasTotalItems"]).toBe(2);
    const codes = [listed.body["api:hasItem"]]
      .flat()
      .map((item: Record<string, any>) => item["cargo:eventCode"]["@id"]);
    expect(codes.sort()).toEqual([`${STATUS}DEP`, `${STATUS}RCS`]);
    const one = await oneRecord(at(second, posted.headers.get("location")!), { token: ADMIN_KEY });
    expect([one.status, one.body["@id"]]).toEqual([200, posted.headers.get("location")]);
    // Both instances answer the same list's Last-Modified.
    const heads = await Promise.all(
      [first, second].map((app) => oneRecord(at(app, events), { method: "HEAD", token: ADMIN_KEY })),
    );
    expect(heads.map((head) => head.status)).toEqual([200, 200]);
    expect(heads[0]!.headers.get("last-modified")).toBe(heads[1]!.headers.get("last-modified"));
  }, 120_000);
});

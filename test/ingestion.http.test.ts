/**
 * Carrier messages over REST: `POST …/handling/shipment/events` takes Cargo-IMP FSU as text/plain and
 * Cargo-XML XFSU as application/xml, answers as for JSON, stores nothing twice for a message sent
 * again, and its milestones reach subscribers' callbacks like any other.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { App } from "../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { startReceiver } from "./support/receiver";

const fixture = (name: string) => readFileSync(path.join(__dirname, "fixtures", name), "utf8");
const EVENTS = "/carrier/handling/shipment/events";

describe.each(BEHAVIOUR_BACKENDS)("carrier messages over REST on %s", (backend) => {
  describeBackend(backend)(`on ${backend}`, () => {
    const disposers = new Disposers();
    let url: string;
    let app: App;
    beforeAll(async () => {
      ({ url, app } = await startApp(backend, disposers));
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const send = (body: string, contentType: string, key = ADMIN_KEY) =>
      fetch(`${url}${EVENTS}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": contentType },
        body,
      });

    it("stores an FSU's milestones, and nothing new when the same message comes again", async () => {
      const first = await send(fixture("fsu/dep-actual-time.txt"), "text/plain");
      expect(first.status).toBe(202);
      const { events } = (await first.json()) as { events: Array<{ clientEventId: string; duplicate: boolean }> };
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ duplicate: false, clientEventId: expect.stringMatching(/^fsu:/) });

      const again = await send(fixture("fsu/dep-actual-time.txt").replace(/\n/g, "\r\n"), "text/plain; charset=utf-8");
      expect(again.status).toBe(202);
      const repeat = (await again.json()) as { events: Array<{ clientEventId: string; duplicate: boolean }> };
      expect(repeat.events).toEqual([
        expect.objectContaining({ clientEventId: events[0]!.clientEventId, duplicate: true }),
      ]);

      const history = (await (
        await fetch(`${url}${EVENTS}?awb=020-12345675`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as Array<{ state: string; station: string; flight: string }>;
      expect(history.filter((m) => m.state === "DEP")).toEqual([
        expect.objectContaining({ station: "FRA", flight: "LH400" }),
      ]);
    });

    it("stores an XFSU's milestones (application/xml and text/xml)", async () => {
      const answer = await send(fixture("xfsu/dep-with-offset.xml"), "application/xml");
      expect(answer.status).toBe(202);
      const { events } = (await answer.json()) as { events: Array<{ clientEventId: string; duplicate: boolean }> };
      expect(events.length).toBeGreaterThan(0);
      expect(events.every((e) => e.clientEventId.startsWith("xfsu:"))).toBe(true);
      const again = await send(fixture("xfsu/dep-with-offset.xml"), "text/xml");
      expect(((await again.json()) as { events: Array<{ duplicate: boolean }> }).events.every((e) => e.duplicate)).toBe(
        true,
      );
    });

    const read = async <T>(route: string, awb: string) =>
      (await (
        await fetch(`${url}/carrier/handling/shipment/${route}?awb=${awb}`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json()) as T;

    it("lists in its 202 the statuses that became no milestone, a typo included, with the line and the reason", async () => {
      const message = ["FSU/14", "02012345675FRAJFK/T1K100", "DPE/LH400/16OCT/FRAJFK/T1K100/A1745"].join("\n");
      const answer = await send(message, "text/plain");
      expect(answer.status).toBe(202);
      const body = (await answer.json()) as { events: unknown[]; unmapped: unknown[]; warnings: unknown[] };
      expect(body).toEqual({
        events: [],
        unmapped: [
          {
            code: "DPE",
            line: 3,
            element: null,
            text: "DPE/LH400/16OCT/FRAJFK/T1K100/A1745",
            reason: expect.stringContaining("DPE"),
          },
        ],
        warnings: [],
      });
    });

    it("stores an AWB with a wrong check digit under the default AWB_CHECK_DIGIT=off, and warns per event in its 202", async () => {
      const answer = await send(
        JSON.stringify([
          { eventId: "cd-ok", awb: "020-12345675", state: "RCS" },
          { eventId: "cd-typo", awb: "020-12345678", state: "RCS" },
        ]),
        "application/json",
      );
      expect(answer.status).toBe(202);
      const body = (await answer.json()) as { events: Array<{ duplicate: boolean }>; warnings: unknown[] };
      expect(body.events).toHaveLength(2);
      expect(body.warnings).toEqual([
        {
          field: "events[1].awb",
          message:
            "020-12345678 has a wrong check digit (the first seven digits of its serial give 5); stored, as AWB_CHECK_DIGIT=off",
        },
      ]);
      const fsu = await send(fixture("fsu/rcs.txt").replace("020-12345675", "020-12345678"), "text/plain");
      expect(((await fsu.json()) as { warnings: Array<{ field: string }> }).warnings).toEqual([
        expect.objectContaining({ field: "events[0].awb" }),
      ]);
    });

    it("refuses a milestone at a station the station data does not have, from every input, and stores nothing", async () => {
      const unknown = "ZZZ is not one of the carrier's stations (GET …/stations/stationcodes lists them)";
      const awb = "020-22222222";
      const json = await send(JSON.stringify([{ awb, state: "ARR", station: "ZZZ" }]), "application/json");
      expect(json.status).toBe(400);
      expect(await json.json()).toMatchObject({ errors: [{ field: "[0].station", message: unknown }] });

      // An XFSU time with an offset needs no time zone: the station itself is what is refused.
      const xfsu = fixture("xfsu/dep-with-offset.xml")
        .replace(/020-12345675/g, awb)
        .replace("<ram:SpecifiedLocation><ram:ID>FRA</ram:ID>", "<ram:SpecifiedLocation><ram:ID>ZZZ</ram:ID>");
      const refused = await send(xfsu, "application/xml");
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ errors: [{ message: unknown }] });

      const graphql = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          query: `mutation { recordStatusEvents(events: [{ awb: "${awb}", state: ARR, station: "ZZZ" }]) { eventId } }`,
        }),
      });
      expect(
        ((await graphql.json()) as { errors: Array<{ extensions: unknown }> }).errors[0]!.extensions,
      ).toMatchObject({ code: "VALIDATION_FAILED", errors: [{ field: "[0].station", message: unknown }] });
      expect(await read<unknown[]>("events", awb)).toEqual([]);
      expect(await read<unknown[]>("carrier-statuses", awb)).toEqual([]);
    });

    it("refuses JSON that is not valid UTF-8 (400 MALFORMED_JSON) and stores nothing, never U+FFFD", async () => {
      const awb = "020-33333333";
      const bytes = Buffer.from(JSON.stringify([{ eventId: "e?3", awb, state: "DEP", station: "FRA" }]), "utf8");
      bytes[bytes.indexOf("e?3") + 1] = 0xff; // not a byte UTF-8 has
      const res = await fetch(`${url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_KEY}` },
        body: bytes,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: "MALFORMED_JSON", detail: "The body is not valid UTF-8" });
      expect(await read<unknown[]>("events", awb)).toEqual([]);
      const graphql = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), // {"\xff":1}
      });
      expect(graphql.status).toBe(400);
      expect(await graphql.json()).toMatchObject({ code: "MALFORMED_JSON" });
    });

    it("answers FSU or XML sent as application/json with the content type that reads it", async () => {
      const fsu = await send(fixture("fsu/rcs.txt"), "application/json");
      expect(fsu.status).toBe(400);
      expect(await fsu.json()).toMatchObject({
        code: "MALFORMED_JSON",
        detail: expect.stringContaining("Cargo-IMP FSU message: send it with Content-Type: text/plain"),
      });
      const xml = await send(fixture("xfsu/dep-with-offset.xml"), "application/json");
      expect(await xml.json()).toMatchObject({
        code: "MALFORMED_JSON",
        detail: expect.stringContaining("send a Cargo-XML XFSU message with Content-Type: application/xml"),
      });
    });

    it("records every status of a message in the AWB's history, milestones or not, with pieces and weight, once", async () => {
      const awb = "020-11111111";
      const message = [
        "FSU/14",
        "02011111111FRAJFK/T10K500",
        "FOH/15OCT1500/FRA/T10K500/LCAG",
        "RCS/15OCT1600/FRA/T10K500",
        "DEP/LH400/16OCT/FRAJFK/P4K200/A1745",
        "OCI/DE/ISS/RA/00012-01",
        "XYZ/THIS IS NO CODE ANYONE KNOWS",
      ].join("\n");
      const answer = await send(message, "text/plain");
      expect(answer.status).toBe(202);
      const { events } = (await answer.json()) as { events: Array<{ eventId: string; clientEventId: string }> };
      expect(events).toHaveLength(2);

      type Status = {
        code: string;
        mapped: boolean;
        milestoneEventId: string | null;
        reason: string | null;
        source: { line: number | null; text: string };
        quantity: { shipment: string; pieces: number; weight: number; weightUnit: string; totalPieces: number } | null;
      };
      const statuses = await read<Status[]>("carrier-statuses", awb);
      // In the order they happened; the two without a time (received now) after, in message order.
      expect(statuses.map((s) => s.code)).toEqual(["FOH", "RCS", "DEP", "OCI", "XYZ"]);
      const byCode = new Map(statuses.map((s) => [s.code, s]));
      // A mapped status points at its stored milestone: the same eventId the POST answered with.
      expect(byCode.get("RCS")).toMatchObject({ mapped: true, reason: null, milestoneEventId: events[0]!.eventId });
      expect(byCode.get("DEP")).toMatchObject({
        mapped: true,
        milestoneEventId: events[1]!.eventId,
        source: { line: 5, text: "DEP/LH400/16OCT/FRAJFK/P4K200/A1745" },
        quantity: { shipment: "P", pieces: 4, weight: 200, weightUnit: "K", totalPieces: 10 },
      });
      expect(byCode.get("FOH")).toMatchObject({
        mapped: false,
        milestoneEventId: null,
        reason: expect.any(String),
        quantity: { shipment: "T", pieces: 10, weight: 500 },
      });
      // The unmapped statuses are no milestones: the milestone history holds RCS and DEP only.
      const milestones = await read<Array<{ state: string }>>("events", awb);
      expect(milestones.map((m) => m.state)).toEqual(["RCS", "DEP"]);

      // Sent again (and a message of unmapped statuses only): nothing recorded twice.
      expect((await send(message, "text/plain")).status).toBe(202);
      const onlyUnmapped = await send(
        "FSU/14\n02011111111FRAJFK/T10K500\nFOH/15OCT1500/FRA/T10K500/LCAG\n",
        "text/plain",
      );
      expect(onlyUnmapped.status).toBe(202);
      expect(await onlyUnmapped.json()).toEqual({
        events: [],
        unmapped: [
          expect.objectContaining({ code: "FOH", line: 3, reason: expect.stringContaining("Freight on hand") }),
        ],
        warnings: [],
      });
      expect(await read<Status[]>("carrier-statuses", awb)).toHaveLength(5);

      // GraphQL reads the same history.
      const graphql = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          query: `query($awb: String!) { carrierStatuses(awb: $awb) { code mapped milestoneEventId quantity { pieces totalPieces } } }`,
          variables: { awb },
        }),
      });
      const { data } = (await graphql.json()) as {
        data: { carrierStatuses: Array<{ code: string; milestoneEventId: string | null; quantity: unknown }> };
      };
      expect(data.carrierStatuses).toHaveLength(5);
      expect(data.carrierStatuses.find((s) => s.code === "DEP")).toEqual(
        expect.objectContaining({ milestoneEventId: events[1]!.eventId, quantity: { pieces: 4, totalPieces: 10 } }),
      );
    });

    it("refuses a NUL character in an FSU line or a JSON event, naming it, and stores nothing", async () => {
      const awb = "020-22222222";
      const fsu = await send(
        "FSU/14\n02022222222FRAJFK/T1K10\nRCS/15OCT1600/FRA/T1K10\nXYZ/NUL\u0000HERE\n",
        "text/plain",
      );
      expect(fsu.status).toBe(400);
      expect(((await fsu.json()) as { errors: unknown[] }).errors).toEqual([
        { field: "line 4", message: expect.stringContaining("NUL character") },
      ]);
      const json = await fetch(`${url}${EVENTS}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ awb, state: "RCS", eventId: "nul\u0000id" }),
      });
      expect(json.status).toBe(400);
      expect(((await json.json()) as { errors: unknown[] }).errors).toEqual([
        { field: "eventId", message: expect.stringContaining("NUL character") },
      ]);
      expect(await read<unknown[]>("events", awb)).toEqual([]);
      expect(await read<unknown[]>("carrier-statuses", awb)).toEqual([]);
    });

    it("stores a message's milestones and statuses in one transaction: a status the database refuses stores neither", async () => {
      const awb = "020-33333333";
      // A rule of this test's own database, so that PostgreSQL itself refuses one status (SQLSTATE 23514).
      await app.database.prisma.$executeRawUnsafe(
        `ALTER TABLE carrier_status ADD CONSTRAINT refuses_foh_of_test CHECK (NOT (awb = '${awb}' AND code = 'FOH'))`,
      );
      const message = "FSU/14\n02033333333FRAJFK/T1K10\nRCS/15OCT1600/FRA/T1K10\nFOH/15OCT1500/FRA/T1K10\n";
      const answer = await send(message, "text/plain");
      expect(answer.status).toBe(500);
      expect(await read<unknown[]>("events", awb)).toEqual([]);
      expect(await read<unknown[]>("carrier-statuses", awb)).toEqual([]);
      await app.database.prisma.$executeRawUnsafe(`ALTER TABLE carrier_status DROP CONSTRAINT refuses_foh_of_test`);
      expect((await send(message, "text/plain")).status).toBe(202);
      expect(await read<unknown[]>("events", awb)).toHaveLength(1);
      expect(await read<unknown[]>("carrier-statuses", awb)).toHaveLength(2);
    });

    it("records an XFSU's statuses with the element each was read from", async () => {
      expect((await send(fixture("xfsu/unknown-codes.xml"), "application/xml")).status).toBe(202);
      const statuses = await read<Array<{ code: string; mapped: boolean; source: { element: string | null } }>>(
        "carrier-statuses",
        "020-12345675",
      );
      const foh = statuses.find((s) => s.code === "FOH" && s.source.element !== null);
      expect(foh).toMatchObject({ mapped: false, source: { element: expect.stringContaining("ReportedStatus") } });
      const refused = await read<{ code: string }>("carrier-statuses", "not-an-awb");
      expect(refused.code).toBe("VALIDATION_FAILED");
    });

    it("refuses a message it cannot read with the problems, naming the line, and stores nothing", async () => {
      const answer = await send(fixture("fsu/bad-consignment.txt"), "text/plain");
      expect(answer.status).toBe(400);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await answer.json()) as { code: string; errors: Array<{ field: string; message: string }> };
      expect(problem.code).toBe("VALIDATION_FAILED");
      expect(problem.errors[0]).toMatchObject({
        field: "line 2",
        message: expect.stringContaining("consignment line"),
      });
      // A message whose first status reads and whose second does not: nothing of it is stored.
      const halfGood = "FSU/14\n020-98765435FRAJFK/T1K100\nRCS/16OCT1317/FRA/T1K100\nDEP/LH400/16XYZ/FRAJFK/T1K100\n";
      const refused = await send(halfGood, "text/plain");
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { errors: Array<{ field: string }> }).errors).toEqual([
        expect.objectContaining({ field: "line 4" }),
      ]);
      const history = (await (
        await fetch(`${url}${EVENTS}?awb=020-98765435`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as Array<{ state: string }>;
      expect(history).toEqual([]);
      expect(await read<unknown[]>("carrier-statuses", "020-98765435")).toEqual([]);

      const xml = await send(fixture("xfsu/external-entity.xml"), "application/xml");
      expect(xml.status).toBe(400);
      expect(((await xml.json()) as { code: string }).code).toBe("VALIDATION_FAILED");
    });

    it("keeps its scope and its media types: no key, a key without events:write, and a PDF", async () => {
      const noKey = await fetch(`${url}${EVENTS}`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: fixture("fsu/rcs.txt"),
      });
      expect(noKey.status).toBe(401);
      const { clientId } = await app.services.clients.createClient({
        name: `reader-${backend}`,
        callbackPrefixes: ["*"],
      });
      const { key: reader } = await app.services.clients.issueKey(clientId, ["events:read"]);
      const withoutScope = await send(fixture("fsu/rcs.txt"), "text/plain", reader);
      expect(withoutScope.status).toBe(403);
      const pdf = await send("%PDF-1.7", "application/pdf");
      expect(pdf.status).toBe(415);
      expect(((await pdf.json()) as { code: string }).code).toBe("UNSUPPORTED_MEDIA_TYPE");
      // Other routes still take JSON only: XML there is refused as before.
      const elsewhere = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/xml" },
        body: "<x/>",
      });
      expect(elsewhere.status).toBe(415);
    });

    it("notifies a subscriber's callback of an FSU's milestone", async () => {
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      const awb = "020-12345675";
      const subscribed = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ awb, callback: `${receiver.url}/ok/fsu-${backend}`, states: ["RCF"] }),
      });
      expect(subscribed.status).toBe(201);
      const delivered = new Promise<string>((resolve) =>
        receiver.onPost((post) => {
          if (post.path === `/ok/fsu-${backend}`) resolve(post.body);
        }),
      );
      const answer = await send(fixture("fsu/arr-rcf.txt"), "text/plain");
      expect(answer.status).toBe(202);
      const body = JSON.parse(await delivered) as Record<string, unknown>;
      expect(JSON.stringify(body)).toContain("RCF");
      expect(JSON.stringify(body)).toContain(awb);
    }, 60_000);
  });
});

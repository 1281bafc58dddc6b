/**
 * A repeated event whose original is deleted (by retention) between the ingestion's insert — which
 * saw the original, so stored nothing — and its read of the original's id. It
 * was answered with no event id at all (a 500 over REST); it is now stored as new, as the same event
 * sent a moment later would be. The race is driven through the service's `afterInsert` seam, which
 * runs between those two statements: on PostgreSQL the delete is retention's kind of statement on
 * another connection, committed while the ingestion's transaction is open; the embedded database runs
 * one transaction at a time, so there it is made inside the ingestion's transaction, which leaves the
 * second statement the same view.
 */
import type { App } from "../src/app";
import { createMilestoneService, type IngestResult } from "../src/milestones/milestone.service";
import type { MilestoneInput } from "../src/milestones/milestone.validate";
import { BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";

describe.each(BACKENDS)("a duplicate whose original is deleted mid-ingestion, on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let serial = 70000000;

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, { RETENTION_INTERVAL_MS: "0", DELIVERY_WORKER: "false" }));
    });
    afterAll(() => disposers.disposeAll());

    /** A service over the app's database whose seam deletes `victim` (once) between the two statements. */
    const serviceDeleting = (victim: () => string | undefined) => {
      let armed = true;
      return createMilestoneService({
        prisma: app.database.prisma,
        onCommitted: () => {},
        afterInsert: async (tx) => {
          const id = victim();
          if (!armed || id === undefined) return;
          armed = false;
          if (backend === "postgres")
            await app.database.sql.query("DELETE FROM status_event WHERE id = $1::uuid", [id]);
          else await tx.$executeRawUnsafe("DELETE FROM status_event WHERE id = $1::uuid", id);
        },
      });
    };
    const event = (awb: string, eventId: string | null): MilestoneInput => ({
      eventId,
      awb,
      state: "RCS",
      occurredAt: new Date("2026-10-16T08:00:00Z"),
      toaTimestamp: null,
      station: null,
      flight: null,
    });
    const stored = (awb: string) =>
      app.database.sql.query<{ id: string; position: string }>(
        "SELECT id::text AS id, position::text AS position FROM status_event WHERE awb = $1 ORDER BY position",
        [awb],
      );

    it.each([
      ["with the caller's eventId", "race-1"],
      ["without eventId (keyed by AWB, state and time)", null],
    ])("%s: stored anew, answered with its new id, numbered after the original", async (_label, eventId) => {
      const awb = `020-${serial++}`;
      const sender = { clientId: "6c1f5a3e-7d2b-4e8a-9f10-0a1b2c3d4e5f" };
      const first: { result?: IngestResult | undefined } = {};
      const milestones = serviceDeleting(() => first.result?.eventId);
      [first.result] = await milestones.ingest([event(awb, eventId)], new Date(), [], sender);
      const original = first.result;
      expect(original).toMatchObject({ duplicate: false });

      const [again] = await milestones.ingest([event(awb, eventId)], new Date(), [], sender);
      expect(again).toEqual({
        eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        clientEventId: eventId,
        duplicate: false,
        matchedSubscriptions: 0,
      });
      expect(again!.eventId).not.toBe(original!.eventId);
      expect(await stored(awb)).toEqual([{ id: again!.eventId, position: "2" }]);

      // Sent once more, it is the duplicate of the event stored the second time.
      const [third] = await milestones.ingest([event(awb, eventId)], new Date(), [], sender);
      expect(third).toMatchObject({ eventId: again!.eventId, duplicate: true });
    });

    it("stores the first of the call's events with that key anew, the others its duplicates", async () => {
      const awb = `020-${serial++}`;
      const first: { result?: IngestResult | undefined } = {};
      const milestones = serviceDeleting(() => first.result?.eventId);
      [first.result] = await milestones.ingest([event(awb, "twice")]);
      const answers = await milestones.ingest([
        { ...event(awb, "twice"), station: "FRA" },
        { ...event(awb, "twice"), station: "JFK" },
      ]);
      expect(answers).toEqual([
        expect.objectContaining({ duplicate: false }),
        expect.objectContaining({ eventId: answers[0]!.eventId, duplicate: true }),
      ]);
      const rows = await app.database.sql.query<{ id: string; station: string }>(
        "SELECT id::text AS id, station FROM status_event WHERE awb = $1",
        [awb],
      );
      expect(rows).toEqual([{ id: answers[0]!.eventId, station: "FRA" }]);
    });

    it("answers a duplicate whose original stays with the original's id (the seam deleting another row)", async () => {
      const awb = `020-${serial++}`;
      const [other] = await app.services.milestones.ingest([event(`020-${serial++}`, "bystander")]);
      const milestones = serviceDeleting(() => other!.eventId);
      const [original] = await milestones.ingest([event(awb, "kept")]);
      const [again] = await milestones.ingest([event(awb, "kept")]);
      expect(again).toEqual({
        eventId: original!.eventId,
        clientEventId: "kept",
        duplicate: true,
        matchedSubscriptions: 0,
      });
      expect(await stored(awb)).toEqual([{ id: original!.eventId, position: "1" }]);
    });
  });
});

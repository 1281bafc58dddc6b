/**
 * An ingestion whose transaction keeps failing with a conflict PostgreSQL resolves by running again
 * (a serialisation failure, 40001): retried, at most three attempts, then refused SERVICE_UNAVAILABLE
 * (503, Retry-After 1) with nothing stored. The conflict is a real database error raised inside the
 * ingestion's own transaction, through the service's `alongside` seam (written in that transaction).
 */
import type { App } from "../src/app";
import { AppError } from "../src/errors";
import { createMilestoneService } from "../src/milestones/milestone.service";
import type { MilestoneInput } from "../src/milestones/milestone.validate";
import { BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";

/** A statement that fails as a serialisation failure would (SQLSTATE 40001). */
const CONFLICT = `DO $$ BEGIN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = 'serialization_failure'; END $$`;

describe.each(BACKENDS)("an ingestion that keeps conflicting, on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let serial = 7100000;

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, { RETENTION_INTERVAL_MS: "0", DELIVERY_WORKER: "false" }));
    });
    afterAll(() => disposers.disposeAll());

    const event = (awb: string): MilestoneInput => ({
      eventId: `conflict-${awb}`,
      awb,
      state: "RCS",
      occurredAt: new Date("2026-10-16T08:00:00Z"),
      toaTimestamp: null,
      station: null,
      flight: null,
    });
    const storedFor = (awb: string) => app.database.prisma.statusEvent.count({ where: { awb } });
    const sender = { clientId: "6c1f5a3e-7d2b-4e8a-9f10-0a1b2c3d4e5f" };
    /** Ingests one event whose transaction conflicts on its first `conflicts` attempts; counts the attempts. */
    const ingestConflicting = async (awb: string, conflicts: number) => {
      const milestones = createMilestoneService({ prisma: app.database.prisma, onCommitted: () => {} });
      let attempts = 0;
      const outcome = await milestones
        .ingest([event(awb)], new Date(), [], sender, async (tx) => {
          attempts++;
          if (attempts <= conflicts) await tx.$executeRawUnsafe(CONFLICT);
        })
        .then(
          (results) => ({ results }),
          (error: unknown) => ({ error }),
        );
      return { attempts, outcome };
    };

    it("retries a conflicting transaction and stores the event once when it goes through", async () => {
      const awb = `020-${serial++}`;
      const { attempts, outcome } = await ingestConflicting(awb, 2);
      expect(attempts).toBe(3);
      expect(outcome).toMatchObject({ results: [{ duplicate: false, clientEventId: `conflict-${awb}` }] });
      expect(await storedFor(awb)).toBe(1);
    });

    it("gives up after three attempts: SERVICE_UNAVAILABLE with a retry in 1 s, nothing stored", async () => {
      const awb = `020-${serial++}`;
      const { attempts, outcome } = await ingestConflicting(awb, Infinity);
      expect(attempts).toBe(3);
      expect("error" in outcome && outcome.error).toBeInstanceOf(AppError);
      expect((outcome as { error: AppError }).error).toMatchObject({
        code: "SERVICE_UNAVAILABLE",
        message: "Concurrent ingestions kept conflicting; nothing was stored, try again",
        retryAfterSeconds: 1,
      });
      expect(await storedFor(awb)).toBe(0);
    });
  });
});

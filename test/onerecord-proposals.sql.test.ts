import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import {
  createProposalStore,
  type ClaimedProposal,
  type ProposalStore,
} from "../src/onerecord/proposals/proposals.store";
import { claimProposals } from "../src/onerecord/sql/proposals-claim.sql";
import { fillProposals } from "../src/onerecord/sql/proposals-fill.sql";
import { recordProposal } from "../src/onerecord/sql/proposal-record.sql";
import { proposalUnanswered } from "../src/onerecord/sql/proposal-unanswered.sql";
import { insertSubscriptionRequest } from "../src/onerecord/sql/subscription-request-insert.sql";
import { lockSubscriber } from "../src/onerecord/sql/subscription-request-lock.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { fixtures, openTestDatabase } from "./support/test-database";

const IDENTIFIER = "LOGISTICS_OBJECT_IDENTIFIER";
const LEASE_MS = 60_000;

/**
 * The subscriber side's statements on both databases: the proposal loop's to-do (fill, claim with a
 * lease, record the answer or the failure, each fenced by the claim's lease). The notifications
 * received from other servers: onerecord-notifications-in.sql.test.ts.
 */
describe.each(BACKENDS)("ONE Record subscriber statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let make: ReturnType<typeof fixtures>;
    let store: ProposalStore;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      make = fixtures(db);
      store = createProposalStore(db.sql);
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(async () => {
      await db.sql.query("TRUNCATE onerecord_proposal, onerecord_partner, onerecord_subscription CASCADE", []);
    });

    /** A partner with an API client (and its Organization id), asking for proposals unless told not to. */
    const partner = async (propose = true) => {
      const clientId = await make.client();
      const organization = `organization-${clientId}`;
      await db.prisma.oneRecordPartner.create({
        data: { organization, serverUrl: "http://partner.test/1r/", clientId, proposeSubscriptions: propose },
      });
      return { clientId, organization };
    };
    const proposals = () => db.prisma.oneRecordProposal.findMany({ orderBy: [{ partner: "asc" }, { topic: "asc" }] });
    const pendingProposal = async (organization: string, topic = `shipment-${make.awb()}`) =>
      (await db.prisma.oneRecordProposal.create({ data: { partner: organization, topicType: IDENTIFIER, topic } })).id;

    describe("onerecord/proposals-fill", () => {
      it("proposes each AWB a partner's client follows once its Shipment exists, once however often it runs", async () => {
        const { clientId, organization } = await partner();
        const known = make.awb();
        await make.event(known);
        await make.subscription(clientId, { awb: known, callback: "http://cb.test/a" });
        await make.subscription(clientId, { awb: known, callback: "http://cb.test/b" }); // same AWB: one proposal
        await make.subscription(clientId, { awb: make.awb() }); // no milestone yet: not yet
        await make.subscription(clientId, { awb: known, expiresAt: new Date(Date.now() - 1_000) });
        expect(await fillProposals.rows(db.sql, { limit: 100 })).toEqual([{ added: 1 }]);
        expect(await fillProposals.rows(db.sql, { limit: 100 })).toEqual([{ added: 0 }]);
        expect(await proposals()).toEqual([
          expect.objectContaining({
            partner: organization,
            topicType: IDENTIFIER,
            topic: `shipment-${known}`,
            status: "PENDING",
            attemptCount: 0,
            leaseUntil: null,
          }),
        ]);
      });

      it("an AWB known by a carrier status only counts; an expired subscription, another client's or a partner not asking do not", async () => {
        const asking = await partner();
        const notAsking = await partner(false);
        const stranger = await make.client();
        const statusOnly = make.awb();
        await db.prisma.carrierStatus.create({
          data: {
            awb: statusOnly,
            statusKey: `key-${randomUUID()}`,
            code: "BKD",
            mapped: false,
            reason: "not a milestone",
            format: "FSU",
            sourceText: "BKD",
            receivedAt: new Date(),
            ordinal: 0,
          },
        });
        const expired = make.awb();
        await make.event(expired);
        await make.subscription(asking.clientId, { awb: statusOnly });
        await make.subscription(asking.clientId, { awb: expired, expiresAt: new Date(Date.now() - 1_000) });
        await make.subscription(notAsking.clientId, { awb: statusOnly });
        await make.subscription(stranger, { awb: statusOnly });
        await fillProposals.rows(db.sql, { limit: 100 });
        expect((await proposals()).map((p) => [p.partner, p.topic])).toEqual([
          [asking.organization, `shipment-${statusOnly}`],
        ]);
      });

      it("adds at most `limit` a run; the next run adds the rest", async () => {
        const { clientId } = await partner();
        for (let i = 0; i < 3; i++) {
          const awb = make.awb();
          await make.event(awb);
          await make.subscription(clientId, { awb });
        }
        expect(await fillProposals.rows(db.sql, { limit: 2 })).toEqual([{ added: 2 }]);
        expect(await fillProposals.rows(db.sql, { limit: 2 })).toEqual([{ added: 1 }]);
        expect(await proposals()).toHaveLength(3);
      });
    });

    describe("onerecord/proposals-claim", () => {
      it("claims due proposals of partners still asking, with a lease; a leased one is not claimed again until it ends", async () => {
        const { organization } = await partner();
        const stopped = await partner(false);
        const due = await pendingProposal(organization);
        await pendingProposal(stopped.organization);
        const later = await pendingProposal(organization);
        await db.prisma.oneRecordProposal.update({
          where: { id: later },
          data: { nextAttemptAt: new Date(Date.now() + 60_000) },
        });
        const [claimed, ...others] = await claimProposals.rows(db.sql, { limit: 10, leaseMs: LEASE_MS });
        expect(others).toEqual([]);
        expect(claimed).toEqual(
          expect.objectContaining({
            id: due,
            partner: organization,
            topic_type: IDENTIFIER,
            server_url: "http://partner.test/1r/",
            attempt_count: 0,
          }),
        );
        expect(new Date(claimed!.lease_until).getTime()).toBeGreaterThan(Date.now() + LEASE_MS / 2);
        expect(await claimProposals.rows(db.sql, { limit: 10, leaseMs: LEASE_MS })).toEqual([]);
        // The lease ran out (a holder that died): claimed again, with a later lease.
        await db.prisma.oneRecordProposal.update({
          where: { id: due },
          data: { leaseUntil: new Date(Date.now() - 1) },
        });
        const [again] = await claimProposals.rows(db.sql, { limit: 10, leaseMs: LEASE_MS });
        expect(again?.id).toBe(due);
      });

      it("two claimers racing over one proposal: one takes it, the other nothing", async () => {
        const { organization } = await partner();
        const id = await pendingProposal(organization);
        for (let round = 0; round < 5; round++) {
          await db.prisma.oneRecordProposal.update({ where: { id }, data: { leaseUntil: null } });
          const claims = await Promise.all([
            claimProposals.rows(db.sql, { limit: 1, leaseMs: LEASE_MS }),
            claimProposals.rows(db.sql, { limit: 1, leaseMs: LEASE_MS }),
          ]);
          expect(claims.map((rows) => rows.length).sort()).toEqual([0, 1]);
        }
      });
    });

    describe("onerecord/proposal-record and proposal-unanswered, fenced by the lease", () => {
      const claimOne = async (): Promise<ClaimedProposal> => {
        const [claimed] = await store.claim(1, LEASE_MS);
        if (!claimed) throw new Error("nothing claimed");
        return claimed;
      };
      const answer = {
        node: { "@type": ["https://onerecord.iata.org/ns/api#Subscription"] },
        eventTypes: ["LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_UPDATED"],
        expiresAt: new Date("2099-01-01T00:00:00.000Z"),
        sendBody: true,
        notifyStatusChange: false,
      };

      it("records the first subscription answered, only it, as an accepted publisher-initiated request, and the proposal DONE", async () => {
        const { organization, clientId } = await partner();
        const awb = make.awb();
        const id = await pendingProposal(organization, `shipment-${awb}`);
        const claimed = await claimOne();
        const ids = await store.answered(claimed, [answer, { ...answer, eventTypes: ["LOGISTICS_OBJECT_CREATED"] }]);
        // One proposal, one topic: one subscription to it, as POST /subscriptions would take.
        expect(ids).toHaveLength(1);
        const row = await db.prisma.oneRecordProposal.findUniqueOrThrow({ where: { id } });
        expect(row).toEqual(
          expect.objectContaining({ status: "DONE", leaseUntil: null, attemptCount: 1, subscriptionId: ids![0] }),
        );
        const recorded = await db.prisma.oneRecordSubscription.findMany({ orderBy: { id: "asc" } });
        expect(recorded.map((r) => r.id).sort()).toEqual([...ids!].sort());
        expect(recorded.find((r) => r.id === ids![0])).toEqual(
          expect.objectContaining({
            status: "REQUEST_ACCEPTED",
            initiatedBy: "PUBLISHER",
            requestedBy: organization,
            subscriber: organization,
            decidedBy: organization,
            topicType: IDENTIFIER,
            topic: `shipment-${awb}`,
            awb,
            eventTypes: ["LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_UPDATED"],
            expiresAt: answer.expiresAt,
            sendBody: true,
            notifyStatusChange: false,
            endpoint: "http://partner.test/1r/notifications",
            origin: "http://partner.test",
            clientId,
            subscription: answer.node,
          }),
        );
        expect(recorded.find((r) => r.id === ids![0])!.decidedAt).toBeInstanceOf(Date);
      });

      it("records none when the partner already holds a live subscription to the topic (DONE, none pointed to); an expired or revoked one does not count", async () => {
        const { organization } = await partner();
        const awb = make.awb();
        const held = await db.prisma.oneRecordSubscription.create({
          data: {
            status: "REQUEST_ACCEPTED",
            initiatedBy: "SUBSCRIBER",
            requestedBy: organization,
            subscription: {},
            subscriber: organization,
            topicType: IDENTIFIER,
            topic: `shipment-${awb}`,
            eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
            disabledAt: new Date(), // a disabled one is live
            endpoint: "http://partner.test/1r/notifications",
            origin: "http://partner.test",
          },
        });
        const id = await pendingProposal(organization, `shipment-${awb}`);
        expect(await store.answered(await claimOne(), [answer])).toEqual([]);
        expect(await db.prisma.oneRecordProposal.findUniqueOrThrow({ where: { id } })).toEqual(
          expect.objectContaining({ status: "DONE", subscriptionId: null }),
        );
        expect((await db.prisma.oneRecordSubscription.findMany()).map((r) => r.id)).toEqual([held.id]);

        // Revoked, or expired: no longer live; the next proposal of the topic records its answer.
        await db.prisma.oneRecordSubscription.update({ where: { id: held.id }, data: { status: "REQUEST_REVOKED" } });
        await db.prisma.oneRecordProposal.delete({ where: { id } });
        await pendingProposal(organization, `shipment-${awb}`);
        expect(await store.answered(await claimOne(), [answer])).toHaveLength(1);
      });

      it("a POST /subscriptions and the recording of a proposal for the same topic, at once: one live subscription results", async () => {
        const { organization } = await partner();
        for (let round = 0; round < 4; round++) {
          await db.sql.query("TRUNCATE onerecord_proposal, onerecord_subscription CASCADE", []);
          const topic = `shipment-${make.awb()}`;
          await pendingProposal(organization, topic);
          const claimed = await claimOne();
          // POST /subscriptions' way: under the subscriber's lock, inserted while no live one is held.
          const posted = db.prisma.$transaction(async (tx) => {
            await lockSubscriber.affectedRows(tx, { subscriber: organization });
            return insertSubscriptionRequest.rows(tx, {
              id: randomUUID(),
              status: "REQUEST_ACCEPTED",
              initiatedBy: "SUBSCRIBER",
              requestedBy: organization,
              decidedBy: organization,
              reason: null,
              errorStatus: null,
              subscription: "{}",
              subscriber: organization,
              topicType: IDENTIFIER,
              topic,
              awb: null,
              eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
              expiresAt: null,
              sendBody: false,
              notifyStatusChange: false,
              endpoint: "http://partner.test/1r/notifications",
              origin: "http://partner.test",
              clientId: null,
              agentScopes: null,
              defaultCap: 100,
              typeCap: 20,
              rejectedCap: 100,
              pendingCap: 100,
            });
          });
          const [inserted, recorded] = await Promise.all([posted, store.answered(claimed, [answer])]);
          expect(inserted.length + recorded!.length).toBe(1);
          expect(await db.prisma.oneRecordSubscription.count({ where: { topic } })).toBe(1);
        }
      });

      it("an answer of none is DONE with nothing recorded", async () => {
        const { organization } = await partner();
        const id = await pendingProposal(organization);
        expect(await store.answered(await claimOne(), [])).toEqual([]);
        expect(await db.prisma.oneRecordProposal.findUniqueOrThrow({ where: { id } })).toEqual(
          expect.objectContaining({ status: "DONE", subscriptionId: null }),
        );
        expect(await db.prisma.oneRecordSubscription.count()).toBe(0);
      });

      it("a claim whose lease was taken over records nothing, and the new holder's answer is the one recorded, once", async () => {
        const { organization } = await partner();
        const id = await pendingProposal(organization);
        const first = await claimOne();
        await db.prisma.oneRecordProposal.update({ where: { id }, data: { leaseUntil: new Date(Date.now() - 1) } });
        const second = await claimOne();
        expect(second.lease.getTime()).toBeGreaterThan(first.lease.getTime());
        expect(await store.answered(first, [answer])).toBeUndefined();
        expect(await store.unanswered(first, { status: "FAILED", delayMs: 0, error: "late" })).toBe(false);
        expect(await db.prisma.oneRecordSubscription.count()).toBe(0);
        expect(await store.answered(second, [answer])).toHaveLength(1);
        // Its own second write (a retry of the recording) finds the proposal DONE: nothing more.
        expect(await store.answered(second, [answer])).toBeUndefined();
        expect(await db.prisma.oneRecordSubscription.count()).toBe(1);
        expect(await db.prisma.oneRecordProposal.findUniqueOrThrow({ where: { id } })).toEqual(
          expect.objectContaining({ status: "DONE", attemptCount: 1, lastError: null }),
        );
      });

      it("unanswered: PENDING again after the delay with the reason, or FAILED for good", async () => {
        const { organization } = await partner();
        const retried = await pendingProposal(organization);
        const before = Date.now();
        expect(
          await store.unanswered(await claimOne(), { status: "PENDING", delayMs: 30_000, error: "HTTP 503" }),
        ).toBe(true);
        const row = await db.prisma.oneRecordProposal.findUniqueOrThrow({ where: { id: retried } });
        expect(row).toEqual(
          expect.objectContaining({ status: "PENDING", attemptCount: 1, leaseUntil: null, lastError: "HTTP 503" }),
        );
        expect(row.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before + 29_000);
        // Not due: not claimed.
        expect(await store.claim(1, LEASE_MS)).toEqual([]);

        const failed = await pendingProposal(organization);
        const [claimed] = await proposalUnanswered.rows(db.sql, {
          id: failed,
          lease: new Date().toISOString(),
          status: "FAILED",
          delayMs: 0,
          error: "x",
        });
        expect(claimed).toBeUndefined(); // not claimed: no lease to name
        const held = await claimOne();
        expect(await store.unanswered(held, { status: "FAILED", delayMs: 0, error: "HTTP 403" })).toBe(true);
        expect(await db.prisma.oneRecordProposal.findUniqueOrThrow({ where: { id: failed } })).toEqual(
          expect.objectContaining({ status: "FAILED", lastError: "HTTP 403", leaseUntil: null }),
        );
        expect(await store.claim(10, LEASE_MS)).toEqual([]);
      });

      it("recordProposal's statement writes nothing for a proposal not PENDING", async () => {
        const { organization } = await partner();
        const id = await pendingProposal(organization);
        const held = await claimOne();
        await db.prisma.oneRecordProposal.update({ where: { id }, data: { status: "FAILED" } });
        const [, rows] = await recordProposal.run(db.sql, {
          id,
          lease: held.lease.toISOString(),
          subscriptions: "[]",
          partner: organization,
          topicType: IDENTIFIER,
          topic: held.topic,
          awb: null,
          endpoint: "http://partner.test/notifications",
          origin: "http://partner.test",
          clientId: null,
        });
        expect(rows).toEqual([{ done: 0, recorded: 0 }]);
      });
    });
  });
});

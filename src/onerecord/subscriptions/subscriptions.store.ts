import type { Prisma } from "../../db/database";
import type { SubscriptionRequestRow } from "../sql/subscription-request-columns";
import { decideSubscriptionRequest } from "../sql/subscription-request-decide.sql";
import { insertSubscriptionRequest } from "../sql/subscription-request-insert.sql";
import { lockSubscriber } from "../sql/subscription-request-lock.sql";
import { lockRequester } from "../sql/requester-lock.sql";
import { readSubscriptionRequest } from "../sql/subscription-request-read.sql";
import { subscriptionRequestRefusal } from "../sql/subscription-request-refusal.sql";
import { revokeSubscriptionRequest } from "../sql/subscription-request-revoke.sql";

export type { SubscriptionRequestRow } from "../sql/subscription-request-columns";

/** Why the insert wrote nothing, as subscription-request-refusal.sql.ts reads it. */
export type SubscriptionRefusal = Awaited<ReturnType<typeof subscriptionRequestRefusal.rows>>[number];

export type NewSubscriptionRequest = Omit<Parameters<typeof insertSubscriptionRequest.rows>[1], "subscription"> & {
  subscription: Record<string, unknown>;
};

/** A transaction's client: the statements run on it. */
export type Tx = Pick<Prisma, "$queryRawUnsafe" | "$executeRawUnsafe">;

/** SubscriptionRequests (onerecord_subscription) through their statements (src/onerecord/sql/subscription-request-*). */
export function createSubscriptionStore(prisma: Prisma) {
  return {
    /** Runs `work` in one transaction: its statements take the runner it is given. */
    transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
      return prisma.$transaction((tx) => work(tx));
    },

    /**
     * Writes the request under its subscriber's lock (held until `tx` ends); when a bound of the
     * insert refuses it, what the bounds saw under that lock instead.
     */
    async insert(
      tx: Tx,
      request: NewSubscriptionRequest,
    ): Promise<{ row: SubscriptionRequestRow } | { refusal: SubscriptionRefusal }> {
      // A third party's pending request counts against its requester: that lock first (lockRequester).
      if (request.status === "REQUEST_PENDING")
        await lockRequester.affectedRows(tx, { requester: request.requestedBy });
      await lockSubscriber.affectedRows(tx, { subscriber: request.subscriber });
      const [row] = await insertSubscriptionRequest.rows(tx, {
        ...request,
        subscription: JSON.stringify(request.subscription),
      });
      if (row !== undefined) return { row };
      const [refusal] = await subscriptionRequestRefusal.rows(tx, {
        subscriber: request.subscriber,
        requestedBy: request.requestedBy,
        topicType: request.topicType,
        topic: request.topic,
      });
      return { refusal: refusal! };
    },

    /**
     * The holder's decision on a pending request, under its requester's and its subscriber's locks; when nothing changed,
     * its status now, and for an acceptance the bounds refused, what they saw.
     */
    async decide(
      tx: Tx,
      parties: { requester: string; subscriber: string },
      decision: Parameters<typeof decideSubscriptionRequest.rows>[1],
    ): Promise<{ row: SubscriptionRequestRow } | { status: string; refusal: SubscriptionRefusal | undefined }> {
      const { requester, subscriber } = parties;
      await lockRequester.affectedRows(tx, { requester });
      await lockSubscriber.affectedRows(tx, { subscriber });
      const [row] = await decideSubscriptionRequest.rows(tx, decision);
      if (row !== undefined) return { row };
      const [now] = await readSubscriptionRequest.rows(tx, { id: decision.id });
      if (now === undefined || now.status !== "REQUEST_PENDING")
        return { status: now?.status ?? "gone", refusal: undefined };
      const [refusal] = await subscriptionRequestRefusal.rows(tx, {
        subscriber,
        requestedBy: now.requested_by,
        topicType: now.topic_type,
        topic: now.topic,
      });
      return { status: now.status, refusal: refusal! };
    },

    /** Whether the API client exists. */
    async clientExists(clientId: string): Promise<boolean> {
      return (await prisma.client.count({ where: { id: clientId } })) > 0;
    },

    async read(id: string): Promise<SubscriptionRequestRow | undefined> {
      return (await readSubscriptionRequest.rows(prisma, { id }))[0];
    },

    /** Undefined when it is neither pending nor accepted any more. */
    async revoke(
      tx: Tx,
      id: string,
      revokedBy: string,
    ): Promise<(SubscriptionRequestRow & { deliveries_ended: number }) | undefined> {
      return (await revokeSubscriptionRequest.rows(tx, { id, revokedBy }))[0];
    },
  };
}

export type SubscriptionStore = ReturnType<typeof createSubscriptionStore>;

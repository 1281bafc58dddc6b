import { randomUUID } from "node:crypto";
import type { Prisma, SqlExecutor } from "../db/database";
import { jsonColumn } from "../db/sql-statement";
import { claimDue } from "./sql/claim-due.sql";
import { deferOrigin } from "./sql/defer-origin.sql";
import { parkPending } from "./sql/park-pending.sql";
import { queueDeliveries as queueDeliveriesSql } from "./sql/queue-deliveries.sql";
import { queueStats } from "./sql/queue-stats.sql";
import { type DisabledRow as DisabledSubscription, recordOutcomes } from "./sql/record-outcomes.sql";
import { releaseClaims } from "./sql/release-claims.sql";

export { DELIVERY_CHANNEL } from "./sql/queue-deliveries.sql";

export interface ClaimedDelivery {
  id: string;
  /** The claim holding this delivery's lease; every write about this attempt names it. */
  leaseToken: string;
  kind: DeliveryKind;
  /** Null for a ONE Record subscriber that is no API client (nothing to sign with). */
  clientId: string | null;
  callback: string;
  origin: string;
  payload: string;
  /** Attempts made before this one. */
  attemptCount: number;
  eventReceivedAt: Date;
  /** The W3C traceparent of the ingestion that queued it, when tracing was on there: the send continues that trace. */
  traceParent?: string | null;
}

export interface AttemptOutcome {
  deliveryId: string;
  leaseToken: string;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The delivery's state after this attempt. */
  status: "DELIVERED" | "PENDING" | "DEAD";
  /** For PENDING: when to try again. */
  nextAttemptAt: Date | null;
}

/** What a delivery carries: a signed legacy webhook, or a ONE Record api:Notification (docs/ONE-RECORD.md). */
export type DeliveryKind = "WEBHOOK" | "ONE_RECORD";

/** A delivery being queued (by an ingestion, or a ONE Record change in its transaction). */
export interface NewDelivery {
  id: string;
  /** WEBHOOK when absent. */
  kind?: DeliveryKind;
  /** The milestone it notifies of; null for a ONE Record notification of an object created or updated. */
  eventId: string | null;
  /** The legacy subscription (WEBHOOK). */
  subscriptionId: string | null;
  /**
   * The ONE Record subscription whose notification this is (ONE_RECORD): it is sent only while that
   * subscription is REQUEST_ACCEPTED, unexpired and enabled, and its outcomes run that
   * subscription's failing clock. Null for webhooks, for LOGISTICS_OBJECT_AVAILABLE announcements to
   * partners, and for notifications about an action request's own status (SUBSCRIPTION_REQUEST_*,
   * ACCESS_DELEGATION_REQUEST_*, CHANGE_REQUEST_*): a SUBSCRIPTION_REQUEST_REJECTED or _REVOKED
   * notification naming its subscription here would never be sent.
   */
  oneRecordSubscriptionId?: string | null;
  /** Whose delivery log shows it; null for a ONE Record subscriber that is no API client. */
  clientId: string | null;
  callback: string;
  origin: string;
  payload: string;
  /** Queued already claimed by this process's worker (see DeliveryHandoff). */
  leased: boolean;
}

type Tx = Pick<Prisma, "$queryRawUnsafe">;

/**
 * Rows per insert. The rows travel as array parameters whatever their number, so this bounds the
 * size of one statement's arrays (memory on both sides), not a bind-parameter count.
 */
const INSERT_CHUNK = 2_000;

/**
 * Queues deliveries inside an ingestion's transaction. Rows marked `leased` are written already
 * claimed, under `leaseToken`, for this process's worker to send after the commit without a claim
 * query; if the process dies first, their lease runs out and any worker claims them. Workers of
 * other processes LISTENing on DELIVERY_CHANNEL are told at commit when unleased rows were queued.
 * `traceParent`: the ingestion's trace, stored with every row (null with tracing off).
 */
export async function queueDeliveries(
  tx: Tx,
  deliveries: readonly NewDelivery[],
  lease: { token: string; ms: number },
  traceParent: string | null = null,
): Promise<void> {
  for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) {
    const chunk = deliveries.slice(i, i + INSERT_CHUNK);
    await queueDeliveriesSql.rows(tx, {
      ids: jsonColumn(chunk.map((d) => d.id)),
      kinds: jsonColumn(chunk.map((d) => d.kind ?? "WEBHOOK")),
      eventIds: jsonColumn(chunk.map((d) => d.eventId)),
      subscriptionIds: jsonColumn(chunk.map((d) => d.subscriptionId)),
      oneRecordSubscriptionIds: jsonColumn(chunk.map((d) => d.oneRecordSubscriptionId ?? null)),
      clientIds: jsonColumn(chunk.map((d) => d.clientId)),
      callbacks: jsonColumn(chunk.map((d) => d.callback)),
      origins: jsonColumn(chunk.map((d) => d.origin)),
      payloads: jsonColumn(chunk.map((d) => d.payload)),
      leased: jsonColumn(chunk.map((d) => d.leased)),
      leaseMs: lease.ms,
      leaseToken: lease.token,
      notify: chunk.some((d) => !d.leased),
      traceParent,
    });
  }
}

/**
 * A subscription that delivery has just disabled (every attempt failed for
 * DELIVERY_DISABLE_AFTER_HOURS): a legacy one (WEBHOOK), or a ONE Record one, whose `callback` is its
 * notifications endpoint and whose `clientId` is null when the subscriber is no API client.
 */
export type { DisabledRow as DisabledSubscription } from "./sql/record-outcomes.sql";

/**
 * The outbox's SQL (statements in `delivery/sql/`): the delivery worker's hot path (claim, record,
 * release, defer) as raw multi-row statements.
 *
 * A claim takes a lease and names it with a fresh token. Until the lease runs out no other claim can
 * take the delivery; after that (its worker died or stalled) another claim may, with a new token.
 * Every write after a claim matches the token (graphile-worker's `locked_by`), so a holder whose
 * lease was taken over writes nothing: it cannot overwrite the new holder's outcome, count an attempt
 * twice or clear the new lease. Every statement that hands a delivery back without a new claim (a
 * give-back, a recorded outcome, parking; a redelivery; retention's expiry pass) clears the token, so
 * no holder's token can match again afterwards. A crash loses nothing: the delivery is claimable when
 * its lease ends.
 */
export function createDeliveryStore(sql: SqlExecutor) {
  return {
    /**
     * Up to `limit` due deliveries, at most `perOrigin` for any one origin, none for `excludeOrigins`,
     * none of an expired or disabled subscription (a due one of a disabled subscription is parked).
     */
    async claimDue({
      limit,
      perOrigin,
      excludeOrigins,
      leaseMs,
    }: {
      limit: number;
      perOrigin: number;
      excludeOrigins: string[];
      leaseMs: number;
    }): Promise<ClaimedDelivery[]> {
      const leaseToken = randomUUID();
      const rows = await claimDue.rows(sql, {
        excludeOrigins,
        scanLimit: limit * 2,
        perOrigin,
        leaseMs,
        limit,
        leaseToken,
      });
      return rows.map((r) => ({
        id: r.id,
        leaseToken,
        kind: r.kind,
        clientId: r.client_id,
        callback: r.callback,
        origin: r.origin,
        payload: r.payload,
        attemptCount: r.attempt_count,
        eventReceivedAt: new Date(r.received_at),
        traceParent: r.trace_parent,
      }));
    },

    /**
     * Moves the due, unclaimed deliveries of an origin that cannot take more right now a little into
     * the future, so that claims for other origins do not scan past them (up to `limit` rows).
     */
    async deferOrigin(origin: string, byMs: number, limit: number): Promise<number> {
      const [row] = await deferOrigin.rows(sql, { origin, byMs, limit });
      return row?.n ?? 0;
    },

    /** Gives claimed deliveries back unattempted; a delivery whose lease another claim holds now is left alone. */
    async release(claims: Array<{ id: string; leaseToken: string }>): Promise<number> {
      if (claims.length === 0) return 0;
      const [row] = await releaseClaims.rows(sql, {
        ids: claims.map((c) => c.id),
        tokens: claims.map((c) => c.leaseToken),
      });
      return row?.n ?? 0;
    },

    /**
     * Records attempts and their deliveries' new states in one statement. An outcome whose claim no
     * longer holds the delivery is dropped whole (attempt row included); returns how many were recorded.
     */
    async recordOutcomes(
      outcomes: AttemptOutcome[],
      failing: {
        /** A subscription every attempt of which has failed this long is disabled (0: never). */
        disableAfterHours: number;
        onDisabled: (subscriptions: DisabledSubscription[]) => void;
        /**
         * Parking the disabled subscriptions' deliveries failed (the outcomes are recorded). Without
         * it, the error is thrown.
         */
        onParkingFailed?: (error: unknown) => void;
      } = { disableAfterHours: 0, onDisabled: () => {} },
    ): Promise<number> {
      if (outcomes.length === 0) return 0;
      // One multi-row statement over arrays: Prisma's createMany cost several times more per batch.
      const [row] = await recordOutcomes.rows(sql, {
        ids: outcomes.map((o) => o.deliveryId),
        tokens: outcomes.map((o) => o.leaseToken),
        statuses: outcomes.map((o) => o.status),
        nextAttemptsAt: outcomes.map((o) => o.nextAttemptAt?.toISOString() ?? null),
        lastErrors: outcomes.map((o) =>
          o.status === "DELIVERED" ? null : (o.error ?? (o.statusCode === null ? "no answer" : `HTTP ${o.statusCode}`)),
        ),
        startedAt: outcomes.map((o) => o.startedAt.toISOString()),
        durationsMs: outcomes.map((o) => o.durationMs),
        statusCodes: outcomes.map((o) => o.statusCode),
        errors: outcomes.map((o) => o.error),
        disableAfterHours: failing.disableAfterHours,
      });
      const disabled = row?.disabled ?? [];
      if (disabled.length > 0) {
        failing.onDisabled(disabled);
        // A statement writes a row once, so the retries it just recorded are parked by a second one.
        // Should it fail, claims park these deliveries as they come due.
        try {
          const of = (kind: DisabledSubscription["kind"]) => disabled.filter((d) => d.kind === kind).map((d) => d.id);
          await parkPending.rows(sql, { subscriptionIds: of("WEBHOOK"), oneRecordSubscriptionIds: of("ONE_RECORD") });
        } catch (error) {
          if (!failing.onParkingFailed) throw error;
          failing.onParkingFailed(error);
        }
      }
      return row?.n ?? 0;
    },

    async queueStats(): Promise<{ pending: number; oldestDueAgeSeconds: number }> {
      const [row] = await queueStats.rows(sql, {});
      return {
        pending: row?.pending ?? 0,
        oldestDueAgeSeconds: row?.oldest ? Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000) : 0,
      };
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;

import { param, sql, statement } from "../../db/sql-statement";
import { ANY_SUBSCRIPTION_DISABLED } from "./subscription-disabled";

/**
 * Leases up to `limit` due deliveries to `leaseToken` for `leaseMs`, at most `perOrigin` of any one
 * origin, none of `excludeOrigins`, none of an expired or disabled subscription, none of a ONE Record
 * subscription that is not accepted (revoked, say); `scanLimit` due rows are considered. A due
 * delivery of a disabled subscription is parked on the way, decided again under the key-share lock
 * (one whose enable committed meanwhile stays due). SKIP LOCKED: concurrent claims take disjoint sets
 * without waiting on each other.
 */
export const claimDue = statement<
  {
    excludeOrigins: string[];
    scanLimit: number;
    perOrigin: number;
    leaseMs: number;
    limit: number;
    leaseToken: string;
  },
  {
    id: string;
    kind: "WEBHOOK" | "ONE_RECORD";
    client_id: string | null;
    callback: string;
    origin: string;
    payload: string;
    attempt_count: number;
    received_at: Date;
    trace_parent: string | null;
  }
>(
  "delivery/claim-due",
  sql`WITH candidates AS (
       SELECT d.id, d.origin, d.next_attempt_at, s.disabled_at IS NOT NULL OR o.disabled_at IS NOT NULL AS disabled
       FROM delivery d LEFT JOIN subscription s ON s.id = d.subscription_id
         LEFT JOIN onerecord_subscription o ON o.id = d.onerecord_subscription_id
       WHERE d.status = 'PENDING' AND d.next_attempt_at <= now()
         AND (d.lease_until IS NULL OR d.lease_until < now())
         AND NOT (d.origin = ANY(${param("excludeOrigins")}::text[]))
         -- Nothing is sent for an expired subscription (retention marks these dead).
         AND NOT coalesce(s.expires_at <= now(), false)
         -- A ONE Record subscription's only while it is accepted (retention marks a revoked one's dead).
         -- Expiry stops new notifications, not these: they tell of what happened while it was valid, and
         -- the publisher keeps a notification until its subscriber confirms it.
         AND NOT coalesce(o.status <> 'REQUEST_ACCEPTED', false)
       ORDER BY d.next_attempt_at
       LIMIT ${param("scanLimit")}
       FOR UPDATE OF d SKIP LOCKED
     ), parked AS (
       -- Sent once its owner enables the subscription again; a stale holder's token goes with it.
       UPDATE delivery d SET status = 'PARKED', lease_until = NULL, lease_token = NULL
       FROM candidates c WHERE d.id = c.id AND c.disabled AND ${ANY_SUBSCRIPTION_DISABLED}
       RETURNING 1
     ), ranked AS (
       SELECT id, next_attempt_at, row_number() OVER (PARTITION BY origin ORDER BY next_attempt_at) AS n
       FROM candidates WHERE NOT disabled
     ), chosen AS (
       SELECT id FROM ranked WHERE n <= ${param("perOrigin")} ORDER BY next_attempt_at LIMIT ${param("limit")}
     )
     UPDATE delivery d SET lease_until = now() + (${param("leaseMs")}::int * interval '1 millisecond'),
       lease_token = ${param("leaseToken")}::uuid
     FROM chosen
     WHERE d.id = chosen.id
     RETURNING d.id, d.kind, d.client_id, d.callback, d.origin, d.payload, d.attempt_count,
       -- When what it notifies of happened here: the milestone's arrival, else when it was queued.
       coalesce((SELECT e.received_at FROM status_event e WHERE e.id = d.event_id), d.created_at) AS received_at,
       d.trace_parent`,
);

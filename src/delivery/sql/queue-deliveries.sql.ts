import { type JsonColumn, jsonRows, param, sql, sqlText, statement } from "../../db/sql-statement";
import { HELD_CALLBACK_PATTERN, HELD_REASON } from "../held-callback";

/** PostgreSQL NOTIFY channel: told at commit when an ingestion queued deliveries for any worker. */
export const DELIVERY_CHANNEL = "cgw_deliveries";

/**
 * Queues deliveries inside an ingestion's transaction, one row per element of the arrays. A row
 * whose `leased` is true is written already claimed under `leaseToken` for `leaseMs`. When `notify`,
 * the workers LISTENing on DELIVERY_CHANNEL are told at commit. A row to a held callback (held-callback.ts)
 * is written PARKED: nothing claims it until its callback names a receiver.
 */
export const queueDeliveries = statement<{
  /** One value per delivery, in the same order (jsonColumn). */
  ids: JsonColumn;
  kinds: JsonColumn;
  eventIds: JsonColumn;
  subscriptionIds: JsonColumn;
  oneRecordSubscriptionIds: JsonColumn;
  clientIds: JsonColumn;
  callbacks: JsonColumn;
  origins: JsonColumn;
  payloads: JsonColumn;
  leased: JsonColumn;
  leaseMs: number;
  leaseToken: string;
  notify: boolean;
  traceParent: string | null;
}>(
  "delivery/queue-deliveries",
  sql`WITH ins AS (
       INSERT INTO delivery (id, kind, event_id, subscription_id, onerecord_subscription_id, client_id, callback, origin,
                             payload, status, last_error, lease_until, lease_token, trace_parent)
       SELECT i::uuid, k, e::uuid, s::uuid, os::uuid, c::uuid, cb, o, p,
              CASE WHEN h.held THEN 'PARKED' ELSE 'PENDING' END::delivery_status,
              CASE WHEN h.held THEN ${sqlText(`'${HELD_REASON}'`)} END,
              CASE WHEN l::boolean AND NOT h.held THEN now() + (${param("leaseMs")}::int * interval '1 millisecond') END,
              CASE WHEN l::boolean AND NOT h.held THEN ${param("leaseToken")}::uuid END,
              ${param("traceParent")}::text
       FROM ${jsonRows("ids", "kinds", "eventIds", "subscriptionIds", "oneRecordSubscriptionIds", "clientIds", "callbacks", "origins", "payloads", "leased")}
              AS v(i, k, e, s, os, c, cb, o, p, l)
            CROSS JOIN LATERAL (SELECT cb LIKE ${sqlText(`'${HELD_CALLBACK_PATTERN}'`)} AS held) h
       RETURNING 1
     ), notified AS (
       SELECT pg_notify('${sqlText(DELIVERY_CHANNEL)}', '') FROM (SELECT count(*) FROM ins) n WHERE ${param("notify")}::boolean
     )
     SELECT (SELECT count(*) FROM notified)::int AS notified`,
);

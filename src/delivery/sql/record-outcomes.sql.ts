import { param, sql, sqlText, statement } from "../../db/sql-statement";

const HOURS = param("disableAfterHours");

/**
 * The failing clock of one kind of subscription (`table`, the `column` of delivery naming it), as
 * CTEs named `<name>_…` over `updated`: a success clears it, a failure starts it, and one older than
 * `disableAfterHours` (0: never) disables the subscription; only changes are written. `<name>_failing`
 * answers each changed row with `newly_disabled`.
 */
const failingClock = (name: string, table: string, column: string, callback: string) => {
  const per = sqlText(`${name}_per`);
  const changing = sqlText(`${name}_changing`);
  const failing = sqlText(`${name}_failing`);
  return sql<"disableAfterHours">`${per} AS (
       SELECT ${sqlText(column)} AS id, bool_or(outcome = 'DELIVERED') AS ok, min(started_at) AS first_failure
       FROM updated WHERE ${sqlText(column)} IS NOT NULL GROUP BY ${sqlText(column)}
     ), ${changing} AS (
       -- Locked as the update below would lock them (no-key, so parking's key-share locks still pass),
       -- and read once locked: "disabling" is decided on the very row the update writes, so a
       -- subscription another statement disabled meanwhile is not reported again.
       SELECT s.id, x.ok, x.first_failure,
              coalesce(NOT x.ok AND ${HOURS}::int > 0 AND s.disabled_at IS NULL
                       AND s.failing_since < now() - ${HOURS}::int * interval '1 hour', false) AS disabling
       FROM ${sqlText(table)} s JOIN ${per} x ON x.id = s.id
       WHERE (x.ok AND s.failing_since IS NOT NULL)
          OR (NOT x.ok AND s.failing_since IS NULL)
          OR (NOT x.ok AND ${HOURS}::int > 0 AND s.disabled_at IS NULL
              AND s.failing_since < now() - ${HOURS}::int * interval '1 hour')
       FOR NO KEY UPDATE OF s
     ), ${failing} AS (
       UPDATE ${sqlText(table)} s SET
         failing_since = CASE WHEN c.ok THEN NULL ELSE coalesce(s.failing_since, c.first_failure) END,
         disabled_at = CASE WHEN c.disabling THEN now() ELSE s.disabled_at END,
         disabled_reason = CASE WHEN c.disabling
                                THEN 'every delivery attempt failed since ' || to_char(s.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                                ELSE s.disabled_reason END
       FROM ${changing} c WHERE s.id = c.id
       RETURNING s.id::text AS id, s.client_id::text AS client_id, s.${sqlText(callback)} AS callback, s.disabled_reason,
                 c.disabling AS newly_disabled
     )`;
};

/** A subscription this statement disabled, of either kind. */
export interface DisabledRow {
  kind: "WEBHOOK" | "ONE_RECORD";
  id: string;
  /** Null for a ONE Record subscriber that is no API client. */
  clientId: string | null;
  /** The callback, or the ONE Record notifications endpoint. */
  callback: string;
  reason: string;
}

/**
 * Records attempts and their deliveries' new states, one element of the arrays per attempt. An
 * attempt whose claim no longer holds its delivery (another lease token) is dropped whole, attempt
 * row included. Then the failing clock of each subscription (legacy `subscription`, or
 * `onerecord_subscription` for a ONE Record notification) the attempts were for: a success clears
 * it, a failure starts it, and one older than `disableAfterHours` (0: never) disables the
 * subscription; only changes are written. Answers how many attempts were recorded, and the
 * subscriptions this statement disabled.
 */
export const recordOutcomes = statement<
  {
    ids: string[];
    tokens: string[];
    statuses: string[];
    nextAttemptsAt: Array<string | null>;
    lastErrors: Array<string | null>;
    startedAt: string[];
    durationsMs: number[];
    statusCodes: Array<number | null>;
    errors: Array<string | null>;
    disableAfterHours: number;
  },
  { n: number; disabled: DisabledRow[] }
>(
  "delivery/record-outcomes",
  sql`WITH v AS (
       SELECT * FROM unnest(${param("ids")}::uuid[], ${param("tokens")}::uuid[], ${param("statuses")}::text[],
                            ${param("nextAttemptsAt")}::timestamptz[], ${param("lastErrors")}::text[],
                            ${param("startedAt")}::timestamptz[], ${param("durationsMs")}::int[],
                            ${param("statusCodes")}::int[], ${param("errors")}::text[])
         AS v(id, token, status, next_attempt_at, last_error, started_at, duration_ms, status_code, error)
     ), updated AS (
       UPDATE delivery d SET
         status = v.status::delivery_status,
         attempt_count = d.attempt_count + 1,
         next_attempt_at = COALESCE(v.next_attempt_at, d.next_attempt_at),
         completed_at = CASE WHEN v.status = 'PENDING' THEN NULL ELSE now() END,
         last_error = v.last_error,
         lease_until = NULL,
         lease_token = NULL
       FROM v WHERE d.id = v.id AND d.lease_token = v.token
       RETURNING d.id, d.subscription_id, d.onerecord_subscription_id, v.status AS outcome, v.started_at
     ), attempts AS (
       INSERT INTO delivery_attempt (delivery_id, started_at, duration_ms, status_code, error)
       SELECT v.id, v.started_at, v.duration_ms, v.status_code, v.error FROM v JOIN updated USING (id)
       RETURNING 1
     ), ${failingClock("webhook", "subscription", "subscription_id", "callback")},
     ${failingClock("onerecord", "onerecord_subscription", "onerecord_subscription_id", "endpoint")},
     newly_disabled AS (
       SELECT 'WEBHOOK' AS kind, * FROM webhook_failing WHERE newly_disabled
       UNION ALL SELECT 'ONE_RECORD', * FROM onerecord_failing WHERE newly_disabled
     )
     SELECT (SELECT count(*)::int FROM attempts) AS n,
            (SELECT coalesce(json_agg(json_build_object('kind', kind, 'id', id, 'clientId', client_id,
               'callback', callback, 'reason', disabled_reason)), '[]'::json)
             FROM newly_disabled) AS disabled`,
);

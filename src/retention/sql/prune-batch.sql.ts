import { param, sql, sqlText, statement } from "../../db/sql-statement";

type Batch = { before: string; limit: number };

/*
 * One batch of each kind: at most `limit` rows older than `before`, locked SKIP LOCKED so that a row
 * a worker holds (or another instance's pruner) is left for later instead of waited for. Each is one
 * statement, so each batch is its own short transaction. A delivery's attempts go with it (ON DELETE
 * CASCADE).
 */

/** A batch of `table`'s rows where `olderThan` (a column compared with `before`) and `also` hold. */
const pruneBatch = (name: string, table: string, olderThan: string, also = "TRUE") =>
  statement<Batch>(
    name,
    sql`WITH doomed AS (
        SELECT id FROM ${sqlText(table)} WHERE ${sqlText(also)} AND ${sqlText(olderThan)} < ${param("before")}::timestamptz
        LIMIT ${param("limit")}::int FOR UPDATE SKIP LOCKED)
      DELETE FROM ${sqlText(table)} t USING doomed WHERE t.id = doomed.id`,
  );

export const pruneDeliveredDeliveries = pruneBatch(
  "retention/prune-delivered-deliveries",
  "delivery",
  "completed_at",
  "status = 'DELIVERED'",
);

export const pruneDeadDeliveries = pruneBatch(
  "retention/prune-dead-deliveries",
  "delivery",
  "completed_at",
  "status = 'DEAD'",
);

/**
 * An event goes only once it has no delivery left (they go by their own ages first), so retention
 * never takes a pending notification, nor one a client may still retry, with its event. An AWB's
 * stream head (awb_stream) is kept, so its positions never start again from 1; the same statement
 * raises each AWB's `awb_stream_pruned` mark to the highest position it deleted, so a reader that
 * finds a hole finds the mark that explains it. Marks are raised in AWB order, so two instances'
 * batches cannot deadlock on them. A milestone posted through ONE Record goes with the body it was
 * posted with (logistics_event, under the AWB's Shipment, "shipment-<awb>" as onerecord/uris.ts names
 * it, and the milestone's id): left behind, it would be listed again as a posted event. Answers how
 * many events went.
 */
export const pruneEvents = statement<Batch, { n: number }>(
  "retention/prune-events",
  sql`WITH doomed AS (
        SELECT e.id FROM status_event e
        WHERE e.received_at < ${param("before")}::timestamptz
          AND NOT EXISTS (SELECT 1 FROM delivery d WHERE d.event_id = e.id)
        LIMIT ${param("limit")}::int FOR UPDATE OF e SKIP LOCKED
      ), gone AS (
        DELETE FROM status_event e USING doomed WHERE e.id = doomed.id RETURNING e.id, e.awb, e.position
      ), posted AS (
        DELETE FROM logistics_event p USING gone WHERE p.object_id = 'shipment-' || gone.awb AND p.id = gone.id
      ), marked AS (
        INSERT INTO awb_stream_pruned (awb, pruned_through)
        SELECT awb, max(position) FROM gone GROUP BY awb ORDER BY awb
        ON CONFLICT (awb) DO UPDATE SET pruned_through = greatest(awb_stream_pruned.pruned_through, excluded.pruned_through)
      )
      SELECT count(*)::int AS n FROM gone`,
);

export const pruneCarrierStatuses = pruneBatch("retention/prune-carrier-statuses", "carrier_status", "received_at");

export const pruneExpiredSubscriptions = pruneBatch(
  "retention/prune-expired-subscriptions",
  "subscription",
  "expires_at",
);

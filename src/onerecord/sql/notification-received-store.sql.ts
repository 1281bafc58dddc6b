import { param, sql, statement } from "../../db/sql-statement";
import { spendQuota } from "./quota-spend";

/**
 * Stores a notification another server POSTed and spends its sender's daily quota for it, in one
 * statement: no transaction holds a connection while it waits for the quota row, which concurrent
 * notifications of one sender take in turns. The spend (quota-spend.ts) is made only when the
 * sender's Notification-Id is not stored yet.
 *
 * Answers one row: `fresh` false for a Notification-Id stored before (nothing spent or stored);
 * `spent` false for a spend past `maxCount` or `maxBytes` (nothing stored); `id` the new row's. A
 * repeat racing its first copy may spend and store nothing (`spent` with no `id`).
 */
export const storeReceivedNotification = statement<
  {
    quota: string;
    sender: string;
    notificationId: string | null;
    eventType: string;
    logisticsObject: string | null;
    body: string;
    bytes: number;
    maxCount: number;
    maxBytes: number;
  },
  { fresh: boolean; spent: boolean; id: string | null }
>(
  "onerecord/notification-received-store",
  sql`WITH fresh AS (
        SELECT NOT EXISTS (
          SELECT 1 FROM onerecord_notification_received
          WHERE sender = ${param("sender")} AND notification_id = ${param("notificationId")}
        ) AS fresh
      ), spent AS (${spendQuota(param("sender"), sql`fresh WHERE fresh.fresh`)}
      ), stored AS (
        INSERT INTO onerecord_notification_received (id, sender, notification_id, event_type, logistics_object, body)
        SELECT gen_random_uuid(), ${param("sender")}, ${param("notificationId")}, ${param("eventType")},
               ${param("logisticsObject")}, ${param("body")}::jsonb
        FROM spent
        ON CONFLICT (sender, notification_id) DO NOTHING
        RETURNING id
      )
      SELECT (SELECT fresh FROM fresh) AS fresh, EXISTS (SELECT 1 FROM spent) AS spent,
             (SELECT id::text FROM stored) AS id`,
);

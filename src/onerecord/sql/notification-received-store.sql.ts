import { param, sql, statement } from "../../db/sql-statement";

/**
 * Stores a notification another server POSTed and spends its sender's daily quota for it, in one
 * statement: no transaction holds a connection while it waits for the quota row, which concurrent
 * notifications of one sender take in turns. The spend is quota-spend.sql.ts's upsert (its row
 * restarts on a new UTC day), made only when the sender's Notification-Id is not stored yet.
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
      ), spent AS (
        INSERT INTO quota_usage AS used (quota, subject, day, count, bytes)
        SELECT ${param("quota")}, ${param("sender")}, (now() AT TIME ZONE 'UTC')::date, 1, ${param("bytes")}::bigint
        FROM fresh WHERE fresh.fresh
        ON CONFLICT (quota, subject) DO UPDATE SET
          day = EXCLUDED.day,
          count = CASE WHEN used.day = EXCLUDED.day THEN used.count + 1 ELSE 1 END,
          bytes = CASE WHEN used.day = EXCLUDED.day THEN used.bytes + EXCLUDED.bytes ELSE EXCLUDED.bytes END
        WHERE used.day <> EXCLUDED.day
           OR (used.count < ${param("maxCount")}::int AND used.bytes + EXCLUDED.bytes <= ${param("maxBytes")}::bigint)
        RETURNING 1
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

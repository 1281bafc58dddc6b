import { param, sql, statement } from "../../db/sql-statement";

/**
 * Stores a notification another server POSTed (POST {base}/notifications). A sender's Notification-Id
 * seen before stores nothing (its unique key): answers the new row, or none for such a repeat. Without
 * a Notification-Id (null) every notification is stored, as nothing tells two of them apart.
 */
export const insertReceivedNotification = statement<
  {
    sender: string;
    notificationId: string | null;
    eventType: string;
    logisticsObject: string | null;
    body: string;
  },
  { id: string }
>(
  "onerecord/notification-received-insert",
  sql`INSERT INTO onerecord_notification_received (id, sender, notification_id, event_type, logistics_object, body)
      VALUES (gen_random_uuid(), ${param("sender")}, ${param("notificationId")}, ${param("eventType")},
              ${param("logisticsObject")}, ${param("body")}::jsonb)
      ON CONFLICT (sender, notification_id) DO NOTHING
      RETURNING id`,
);

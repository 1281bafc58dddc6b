import { param, sql, statement } from "../../db/sql-statement";

/** Whether a sender's notification of this Notification-Id is stored (its unique key): one row, or none. */
export const seenReceivedNotification = statement<{ sender: string; notificationId: string }, { seen: number }>(
  "onerecord/notification-received-seen",
  sql`SELECT 1 AS seen FROM onerecord_notification_received
      WHERE sender = ${param("sender")} AND notification_id = ${param("notificationId")}`,
);

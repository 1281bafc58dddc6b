import type { Logger } from "pino";
import type { SqlRunner } from "../../db/sql-statement";
import { AppError } from "../../errors";
import type { OneRecordCaller } from "../identity/caller";
import { readJsonLdObject } from "../jsonld-codec";
import { insertReceivedNotification } from "../sql/notification-received-insert.sql";
import { readNotification } from "./notification-in";

export interface NotificationsInDeps {
  /** Where the statement runs (Database.sql). */
  sql: SqlRunner;
  /** Counts a stored notification (notifications-in.metrics.ts). */
  onStored: (eventType: string) => void;
  log: Pick<Logger, "info">;
}

export interface NotificationsIn {
  /**
   * Reads and stores a notification POSTed by `caller`; answers whether it was stored now (false: its
   * sender sent this Notification-Id before, and it is stored once). A body that is no api:Notification
   * is refused (400) and nothing is stored.
   */
  receive(caller: OneRecordCaller, body: unknown, notificationId: string | undefined): Promise<{ stored: boolean }>;
}

/** A Notification-Id this server keeps: printable ASCII, at most this long (the outbox's are UUIDs). */
const MAX_NOTIFICATION_ID = 200;

/** The gateway as a subscriber: notifications from other ONE Record servers (docs/ONE-RECORD.md "Receiving notifications"). */
export function createNotificationsIn(deps: NotificationsInDeps): NotificationsIn {
  return {
    async receive(caller, body, notificationId) {
      const id = checkedNotificationId(notificationId);
      const root = await readJsonLdObject(body);
      const notification = readNotification(root);
      // A notification is a message, not a resource: the label the reading gave its root says nothing.
      if (typeof root["@id"] === "string" && root["@id"].startsWith("_:")) delete root["@id"];
      const rows = await insertReceivedNotification.rows(deps.sql, {
        sender: caller.organizationId,
        notificationId: id,
        eventType: notification.eventType,
        logisticsObject: notification.logisticsObject ?? null,
        body: JSON.stringify(root),
      });
      const stored = rows.length > 0;
      if (stored) {
        deps.onStored(notification.eventType);
        deps.log.info(
          {
            sender: caller.organizationUri,
            eventType: notification.eventType,
            logisticsObject: notification.logisticsObject,
            ...(id === null ? {} : { notificationId: id }),
          },
          "ONE Record notification received",
        );
      }
      return { stored };
    },
  };
}

function checkedNotificationId(header: string | undefined): string | null {
  if (header === undefined) return null;
  const id = header.trim();
  if (id.length === 0 || id.length > MAX_NOTIFICATION_ID || !/^[\x20-\x7e]+$/.test(id))
    throw new AppError(
      "VALIDATION_FAILED",
      `Notification-Id is printable ASCII of 1 to ${MAX_NOTIFICATION_ID} characters, got ${JSON.stringify(header.slice(0, 40))}`,
      { errors: [{ field: "Notification-Id", message: `printable ASCII, 1 to ${MAX_NOTIFICATION_ID} characters` }] },
    );
  return id;
}

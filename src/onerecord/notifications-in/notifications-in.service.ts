import type { Logger } from "pino";
import type { SqlRunner } from "../../db/sql-statement";
import { AppError } from "../../errors";
import type { OneRecordCaller } from "../identity/caller";
import { clientIdOfOrganizationId } from "../identity/organizations";
import { readJsonLdObject } from "../jsonld-codec";
import { type DailyQuota, exceeded } from "../quota/daily-quota";
import { storeReceivedNotification } from "../sql/notification-received-store.sql";
import { readPartner } from "../sql/partner-read.sql";
import { type ReceivedNotification, readNotification } from "./notification-in";

export interface NotificationsInDeps {
  /** Where the statements run (Database.sql). */
  sql: SqlRunner;
  /** What one sender may store a UTC day (ONE_RECORD_NOTIFICATIONS_PER_DAY, ONE_RECORD_NOTIFICATION_BYTES_PER_DAY). */
  quota: { perDay: number; bytesPerDay: number };
  /** Told of each notification stored and its bytes: counted (notifications-in.metrics.ts), and told to the table upkeep. */
  onStored: (eventType: string, bytes: number) => void;
  log: Pick<Logger, "info">;
}

export interface NotificationsIn {
  /**
   * Reads and stores a notification POSTed by `caller`; answers whether it was stored now (false: its
   * sender sent this Notification-Id before, and it is stored once). Refused, nothing stored: a caller
   * the operator did not register as a partner (403), a body that is no api:Notification (400), one
   * whose stored form is over MAX_STORED_NOTIFICATION_BYTES (413), one past the sender's daily quota (429).
   */
  receive(caller: OneRecordCaller, body: unknown, notificationId: string | undefined): Promise<{ stored: boolean }>;
}

/** A Notification-Id this server keeps: printable ASCII, at most this long (the outbox's are UUIDs). */
const MAX_NOTIFICATION_ID = 200;

/**
 * The largest notification stored (bytes of its expanded JSON-LD, as kept): 4 times the largest body,
 * as expanding writes every term as its full IRI and every value as an object. A context of long
 * IRIs makes a body of a few KiB expand to megabytes; beyond this it is 413 and nothing is stored.
 */
export const MAX_STORED_NOTIFICATION_BYTES = 1024 * 1024;

/** The gateway as a subscriber: notifications from other ONE Record servers (docs/ONE-RECORD.md "Receiving notifications"). */
export function createNotificationsIn(deps: NotificationsInDeps): NotificationsIn {
  const quota: DailyQuota = {
    name: "onerecord_notifications_received",
    what: "notifications",
    perDay: deps.quota.perDay,
    bytesPerDay: deps.quota.bytesPerDay,
    settings: { perDay: "ONE_RECORD_NOTIFICATIONS_PER_DAY", bytesPerDay: "ONE_RECORD_NOTIFICATION_BYTES_PER_DAY" },
  };
  /**
   * Stores a notification within its sender's quota; false for a repeated Notification-Id (nothing
   * stored or spent, also once the quota is spent), QUOTA_EXCEEDED past the quota.
   */
  const storeOnce = async (
    sender: string,
    id: string | null,
    notification: ReceivedNotification,
    stored: string,
    bytes: number,
  ): Promise<boolean> => {
    // MUST: the statement does not check a first spend of the day against the quota.
    if (bytes > quota.bytesPerDay) throw exceeded(quota, new Date(), `this one is ${bytes} bytes`);
    const [outcome] = await storeReceivedNotification.rows(deps.sql, {
      quota: quota.name,
      sender,
      notificationId: id,
      eventType: notification.eventType,
      logisticsObject: notification.logisticsObject ?? null,
      body: stored,
      bytes,
      maxCount: quota.perDay,
      maxBytes: quota.bytesPerDay,
    });
    if (outcome!.fresh && !outcome!.spent) throw exceeded(quota, new Date());
    return outcome!.id !== null;
  };
  return {
    async receive(caller, body, notificationId) {
      const id = checkedNotificationId(notificationId);
      // Before the body's JSON-LD is read: a stranger costs one lookup and stores nothing.
      const [partner] = await readPartner.rows(deps.sql, { organization: caller.organizationId });
      if (partner === undefined) throw notAPartner(caller);
      const root = await readJsonLdObject(body);
      const notification = readNotification(root);
      // A notification is a message, not a resource: the label the reading gave its root says nothing.
      if (typeof root["@id"] === "string" && root["@id"].startsWith("_:")) delete root["@id"];
      const stored = JSON.stringify(root);
      const bytes = Buffer.byteLength(stored);
      if (bytes > MAX_STORED_NOTIFICATION_BYTES)
        throw new AppError(
          "PAYLOAD_TOO_LARGE",
          `The notification is ${bytes} bytes as stored (expanded JSON-LD), over the ${MAX_STORED_NOTIFICATION_BYTES / 1024} KiB ` +
            "this server stores: send it with fewer or shorter terms (its object's body is optional)",
        );
      const inserted = await storeOnce(caller.organizationId, id, notification, stored, bytes);
      if (inserted) {
        deps.onStored(notification.eventType, bytes);
        deps.log.info(
          {
            sender: caller.organizationUri,
            eventType: notification.eventType,
            logisticsObject: notification.logisticsObject,
            bytes,
            ...(id === null ? {} : { notificationId: id }),
          },
          "ONE Record notification received",
        );
      }
      return { stored: inserted };
    },
  };
}

/** 403 naming what the operator runs to register the caller (docs/ONE-RECORD.md "Receiving notifications"). */
function notAPartner(caller: OneRecordCaller): AppError {
  const clientId = clientIdOfOrganizationId(caller.organizationId);
  const who = clientId === undefined ? `--agent ${caller.organizationId}` : `--client ${clientId}`;
  return new AppError(
    "ACCESS_DENIED",
    `This server takes notifications only from the ONE Record partners its operator registered, and ` +
      `${caller.organizationUri} is not one: ask the operator to run ` +
      `\`npm run admin -- partner:add --server <your ONE Record server's URL> ${who}\`, or, while the gateway ` +
      `runs, the GraphQL mutation registerOneRecordPartner with the admin scope`,
  );
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

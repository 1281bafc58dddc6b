import type { Prisma } from "../../db/database";

/** A notification another ONE Record server POSTed to this one, as stored. */
export interface ReceivedNotificationRow {
  readonly id: string;
  /** The sender's Organization id (a client's local id, or an agent's URI). */
  readonly sender: string;
  readonly notificationId: string | null;
  readonly eventType: string;
  readonly logisticsObject: string | null;
  /** The api:Notification as expanded JSON-LD. */
  readonly body: unknown;
  readonly receivedAt: Date;
}

/** At most this many a listing: a longer history is read page by page with `since`. */
export const MAX_LISTED = 1_000;

/** What operators read of the notifications received (`npm run admin -- notifications`). */
export function createReceivedNotifications(prisma: Prisma) {
  return {
    /** Received at or after `since` (all when undefined), oldest first, at most `limit` (≤ MAX_LISTED). */
    async list({ since, limit }: { since?: Date; limit: number }): Promise<ReceivedNotificationRow[]> {
      return prisma.oneRecordNotificationReceived.findMany({
        where: since === undefined ? {} : { receivedAt: { gte: since } },
        orderBy: [{ receivedAt: "asc" }, { id: "asc" }],
        take: Math.min(Math.max(1, limit), MAX_LISTED),
      });
    },
  };
}

export type ReceivedNotifications = ReturnType<typeof createReceivedNotifications>;

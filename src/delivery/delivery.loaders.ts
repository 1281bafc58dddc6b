import DataLoader from "dataloader";
import type { Prisma } from "../db/database";

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  dead: number;
}

/**
 * Delivery counts per subscription, batched: a page of 200 subscriptions asking for their counts is
 * one grouped query, not 200. One loader per request (its cache must not outlive the request).
 */
export function createDeliveryCountsLoader(prisma: Pick<Prisma, "delivery">): DataLoader<string, DeliveryCounts> {
  return new DataLoader(async (subscriptionIds: readonly string[]) => {
    const groups = await prisma.delivery.groupBy({
      by: ["subscriptionId", "status"],
      where: { subscriptionId: { in: [...subscriptionIds] } },
      _count: { _all: true },
    });
    const counts = new Map(subscriptionIds.map((id) => [id, { pending: 0, delivered: 0, dead: 0 }]));
    for (const group of groups) {
      const entry = group.subscriptionId ? counts.get(group.subscriptionId) : undefined;
      if (!entry) continue;
      // Parked ones (a disabled subscription's) are not sent yet: they count as pending.
      if (group.status === "PENDING" || group.status === "PARKED") entry.pending += group._count._all;
      else if (group.status === "DELIVERED") entry.delivered = group._count._all;
      else entry.dead = group._count._all;
    }
    return subscriptionIds.map((id) => counts.get(id)!);
  });
}

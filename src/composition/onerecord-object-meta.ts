import type { Prisma } from "../db/database";
import type { ObjectMeta } from "../onerecord/identity/access-policy";
import { CARRIER_ORGANIZATION_ID } from "../onerecord/identity/organizations";
import { awbObjectKindOf, awbOfObjectId } from "../onerecord/uris";

const SHIPMENT = "https://onerecord.iata.org/ns/cargo#Shipment";

/**
 * The access facts of the object whose events are asked for: an AWB's Shipment when the gateway knows
 * the AWB (a milestone or a carrier status), else a stored logistics object. Until the objects store
 * answers this (with the AWB's skeletons), the events routes read it here.
 */
export function eventObjectMeta(prisma: Prisma): (objectId: string) => Promise<ObjectMeta | undefined> {
  return async (objectId) => {
    const awb = awbOfObjectId(objectId);
    if (awb !== undefined && awbObjectKindOf(objectId) === "shipment") {
      const known =
        (await prisma.statusEvent.findFirst({ where: { awb }, select: { id: true } })) ??
        (await prisma.carrierStatus.findFirst({ where: { awb }, select: { id: true } }));
      if (known) return { id: objectId, type: SHIPMENT, awb, createdBy: CARRIER_ORGANIZATION_ID };
    }
    const row = await prisma.logisticsObject.findUnique({
      where: { id: objectId },
      select: { id: true, type: true, awb: true, createdBy: true },
    });
    return row === null ? undefined : { id: row.id, type: row.type, awb: row.awb, createdBy: row.createdBy };
  };
}

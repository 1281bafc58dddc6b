import type { Prisma } from "../../db/database";
import { AppError } from "../../errors";
import { createOneRecordUris } from "../uris";
import { createObjectGrantStore } from "./object-grants.store";
import { agentOrganizationId, CARRIER_ORGANIZATION_ID } from "./organizations";

/**
 * Grants made by the operator on an object's creator's behalf (`npm run admin -- object:grant`): the
 * ONE Record way, access delegation requests, comes with part 2's action requests.
 */
export function createOperatorGrants(prisma: Prisma, baseUrl: string | undefined) {
  const store = createObjectGrantStore(prisma);
  const uris = baseUrl === undefined ? undefined : createOneRecordUris(() => baseUrl);
  /** An Organization as given: its id, or a URI (one of this server's, with ONE_RECORD_BASE_URL, is its id). */
  const organizationIdOf = (organization: string) => agentOrganizationId(organization, (uri) => uris?.localIdOf(uri));
  const creatorOf = async (objectId: string) => {
    const object = await prisma.logisticsObject.findUnique({ where: { id: objectId }, select: { createdBy: true } });
    if (!object) throw new AppError("NOT_FOUND", `No logistics object ${objectId}`);
    if (object.createdBy === CARRIER_ORGANIZATION_ID)
      throw new AppError(
        "VALIDATION_FAILED",
        `${objectId} is the carrier's: an AWB's objects are read with events:read, its stations by anyone`,
      );
    return object.createdBy;
  };
  return {
    /** Grants read access, to be passed on or not (`mayPassOn`); answers the grantee's Organization id. */
    async grant(objectId: string, organization: string, { mayPassOn = false } = {}): Promise<string> {
      const organizationId = organizationIdOf(organization);
      await store.grantRead(objectId, organizationId, await creatorOf(objectId), mayPassOn);
      return organizationId;
    },
    async revoke(objectId: string, organization: string): Promise<string> {
      const organizationId = organizationIdOf(organization);
      await store.revokeRead(objectId, organizationId, await creatorOf(objectId));
      return organizationId;
    },
  };
}

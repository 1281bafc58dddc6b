import type { Prisma } from "../../db/database";
import { AppError } from "../../errors";
import { revokeChainedDelegations } from "../sql/delegations-chain-revoke.sql";
import { lockDelegationObjects } from "../sql/delegation-objects-lock.sql";
import { grantRead } from "../sql/grant-read.sql";
import { readersOf } from "../sql/readers-of.sql";
import { revokeRead } from "../sql/revoke-read.sql";

/**
 * Read access to a logistics object that its creator gives another Organization (table
 * logistics_object_grant): the grantee reads the object, its revisions, audit trail and events, and
 * may ask for changes, which stay pending for the creator to decide (access-policy.ts). Access
 * delegations (src/onerecord/delegations/) add grants of their own to the same table.
 */
export interface ObjectGrantStore {
  /**
   * Grants `organizationId` read access to the object; `grantedBy` must be its creator. It takes the
   * place of a grant an access delegation made (no expiry, no delegation). `mayPassOn`: the grantee may
   * delegate it further (default: not). Again: it says `mayPassOn` again, nothing else changes.
   */
  grantRead(objectId: string, organizationId: string, grantedBy: string, mayPassOn?: boolean): Promise<void>;
  /**
   * Withdraws it, and with it what the grantee passed on through access delegations (the trust chain);
   * delegations left with no grant are revoked. `revokedBy` must be the object's creator. One never
   * granted: no change.
   */
  revokeRead(objectId: string, organizationId: string, revokedBy: string): Promise<void>;
  /** The Organizations granted each object now (expired grants left out), by object id (none: absent). */
  readersOf(objectIds: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>>;
}

export function createObjectGrantStore(prisma: Prisma): ObjectGrantStore {
  return {
    async grantRead(objectId, organizationId, grantedBy, mayPassOn = false) {
      const [object] = await grantRead.rows(prisma, { objectId, organizationId, grantedBy, mayPassOn });
      refuseUnlessCreator(objectId, object?.created_by, grantedBy);
    },
    async revokeRead(objectId, organizationId, revokedBy) {
      const object = await prisma.$transaction(async (tx) => {
        // As a delegation's revocation: no delegation is decided on this object meanwhile.
        await lockDelegationObjects.rows(tx, { objectIds: [objectId], requester: revokedBy });
        const [revoked] = await revokeRead.rows(tx, { objectId, organizationId, revokedBy });
        if (revoked && revoked.delegation_ids.length > 0)
          await revokeChainedDelegations.rows(tx, {
            ids: revoked.delegation_ids,
            revokedBy,
            reason: `Withdrawn with ${organizationId}'s read access to ${objectId}, on whose word it was granted`,
          });
        return revoked;
      });
      refuseUnlessCreator(objectId, object?.created_by, revokedBy);
    },
    async readersOf(objectIds) {
      const readers = new Map<string, string[]>();
      for (const row of await readersOf.rows(prisma, { objectIds: [...objectIds] })) {
        const list = readers.get(row.object_id) ?? [];
        list.push(row.organization_id);
        readers.set(row.object_id, list);
      }
      return readers;
    },
  };
}

function refuseUnlessCreator(objectId: string, createdBy: string | undefined, organizationId: string): void {
  if (createdBy === undefined) throw new AppError("NOT_FOUND", `No logistics object ${objectId}`);
  if (createdBy !== organizationId)
    throw new AppError("ACCESS_DENIED", `Only the creator of logistics object ${objectId} grants access to it`);
}

import type { SqlRunner } from "../../db/sql-statement";
import { AppError } from "../../errors";
import { grantRead } from "../sql/grant-read.sql";
import { readersOf } from "../sql/readers-of.sql";
import { revokeRead } from "../sql/revoke-read.sql";

/**
 * Read access to a logistics object that its creator gives another Organization (table
 * logistics_object_grant): the grantee reads the object, its revisions, audit trail and events, and
 * may ask for changes, which stay pending for the creator to decide (access-policy.ts).
 */
export interface ObjectGrantStore {
  /** Grants `organizationId` read access to the object; `grantedBy` must be its creator. Again: no change. */
  grantRead(objectId: string, organizationId: string, grantedBy: string): Promise<void>;
  /** Withdraws it; `revokedBy` must be the object's creator. One never granted: no change. */
  revokeRead(objectId: string, organizationId: string, revokedBy: string): Promise<void>;
  /** The Organizations granted each object, by object id (an object without grants: absent). */
  readersOf(objectIds: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>>;
}

export function createObjectGrantStore(db: SqlRunner): ObjectGrantStore {
  return {
    async grantRead(objectId, organizationId, grantedBy) {
      const [object] = await grantRead.rows(db, { objectId, organizationId, grantedBy });
      refuseUnlessCreator(objectId, object?.created_by, grantedBy);
    },
    async revokeRead(objectId, organizationId, revokedBy) {
      const [object] = await revokeRead.rows(db, { objectId, organizationId, revokedBy });
      refuseUnlessCreator(objectId, object?.created_by, revokedBy);
    },
    async readersOf(objectIds) {
      const readers = new Map<string, string[]>();
      for (const row of await readersOf.rows(db, { objectIds: [...objectIds] })) {
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

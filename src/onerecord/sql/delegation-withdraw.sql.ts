import { param, sql, statement } from "../../db/sql-statement";
import { withdrawnGrants } from "./grant-chain";

/**
 * Deletes the grants an access delegation made, and along the trust chain what its delegate passed on
 * (grant-chain.ts). Answers each grant deleted with the delegation that made it.
 */
export const withdrawDelegation = statement<
  { delegationId: string },
  { object_id: string; organization_id: string; delegation_id: string | null }
>(
  "onerecord/delegation-withdraw",
  sql`WITH RECURSIVE ${withdrawnGrants(
    sql`SELECT g.object_id, g.organization_id FROM logistics_object_grant g
        WHERE g.delegation_id = ${param("delegationId")}::uuid`,
  )}
      SELECT object_id, organization_id, delegation_id FROM withdrawn ORDER BY object_id, organization_id`,
);

import { param, sql, statement } from "../../db/sql-statement";
import { GRANTED_OF_OBJECTS, READS_AWBS_BY_SCOPE } from "./subscription-matching-columns";

/**
 * What the subscribers of the subscriptions `ids` may read of AWBs' objects now: `by_scope` all
 * (READS_AWBS_BY_SCOPE), `granted` those of `objectIds` an active grant names them for. Ingestion
 * asks it only of the subscriptions its lookup found (milestones/sql/subscriptions-of-awbs.sql.ts).
 */
export const subscriptionsReadingAwbs = statement<
  { ids: string[]; objectIds: string[] },
  { id: string; by_scope: boolean; granted: string[] }
>(
  "onerecord/subscriptions-reading-awbs",
  sql`SELECT s.id::text AS id, ${READS_AWBS_BY_SCOPE} AS by_scope, ${GRANTED_OF_OBJECTS} AS granted
      FROM onerecord_subscription s
      WHERE s.id = ANY(${param("ids")}::uuid[])
      ORDER BY s.id`,
);

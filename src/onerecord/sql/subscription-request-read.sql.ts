import { param, sql, statement } from "../../db/sql-statement";
import { SUBSCRIPTION_REQUEST_COLUMNS, type SubscriptionRequestRow } from "./subscription-request-columns";

/** A SubscriptionRequest by its id. */
export const readSubscriptionRequest = statement<{ id: string }, SubscriptionRequestRow>(
  "onerecord/subscription-request-read",
  sql`SELECT ${SUBSCRIPTION_REQUEST_COLUMNS} FROM onerecord_subscription WHERE id = ${param("id")}::uuid`,
);

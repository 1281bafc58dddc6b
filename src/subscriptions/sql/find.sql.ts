import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, type SubscriptionRow } from "./subscription-columns";

/** The client's subscription `id`, expired or not. */
export const find = statement<{ id: string; clientId: string }, SubscriptionRow>(
  "subscriptions/find",
  sql`SELECT ${COLUMNS} FROM subscription WHERE id = ${param("id")}::uuid AND client_id = ${param("clientId")}::uuid`,
);

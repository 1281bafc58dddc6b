import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, type SubscriptionRow } from "./subscription-columns";

/** Deletes the client's subscription `id`, answering it as it was. */
export const remove = statement<{ id: string; clientId: string }, SubscriptionRow>(
  "subscriptions/remove",
  sql`DELETE FROM subscription WHERE id = ${param("id")}::uuid AND client_id = ${param("clientId")}::uuid RETURNING ${COLUMNS}`,
);

import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, type SubscriptionRow } from "./subscription-columns";

/**
 * Up to `limit` of the client's subscriptions, oldest first (ties by id), of `awb` and of `callback`
 * when given, after the cursor's row (`afterCreatedAt`, `afterId`) when given.
 */
export const list = statement<
  {
    clientId: string;
    awb: string | null;
    callback: string | null;
    afterCreatedAt: Date | null;
    afterId: string | null;
    limit: number;
  },
  SubscriptionRow
>(
  "subscriptions/list",
  sql`SELECT ${COLUMNS} FROM subscription
      WHERE client_id = ${param("clientId")}::uuid
        AND (${param("awb")}::text IS NULL OR awb = ${param("awb")}::text)
        AND (${param("callback")}::text IS NULL OR callback = ${param("callback")}::text)
        AND (${param("afterCreatedAt")}::timestamptz IS NULL
             OR (created_at, id) > (${param("afterCreatedAt")}::timestamptz, ${param("afterId")}::uuid))
      ORDER BY created_at, id LIMIT ${param("limit")}`,
);

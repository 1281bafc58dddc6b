import { param, sql, statement } from "../../db/sql-statement";

/**
 * Spends one unit and `bytes` of a caller's daily quota, in one statement, so concurrent spends cannot
 * overshoot it: the row's update waits for the other's. A new UTC day starts the counts again. No row
 * answered: the spend would pass `maxCount` or `maxBytes`, and nothing changed.
 */
export const spendQuota = statement<
  { quota: string; subject: string; bytes: number; maxCount: number; maxBytes: number },
  { count: number }
>(
  "onerecord/quota-spend",
  sql`INSERT INTO quota_usage AS used (quota, subject, day, count, bytes)
      VALUES (${param("quota")}, ${param("subject")}, (now() AT TIME ZONE 'UTC')::date, 1, ${param("bytes")}::bigint)
      ON CONFLICT (quota, subject) DO UPDATE SET
        day = EXCLUDED.day,
        count = CASE WHEN used.day = EXCLUDED.day THEN used.count + 1 ELSE 1 END,
        bytes = CASE WHEN used.day = EXCLUDED.day THEN used.bytes + EXCLUDED.bytes ELSE EXCLUDED.bytes END
      WHERE used.day <> EXCLUDED.day
         OR (used.count < ${param("maxCount")}::int AND used.bytes + EXCLUDED.bytes <= ${param("maxBytes")}::bigint)
      RETURNING count`,
);

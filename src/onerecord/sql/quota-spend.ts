import { param, sql, type SqlFragment, type SqlParam } from "../../db/sql-statement";

/**
 * The statement part that spends one unit and `bytes` of a caller's daily quota, for the statements
 * that store what the quota counts: spending and storing in one statement, no transaction holds a
 * connection while it waits for the quota row (concurrent spends of one caller take it in turns, so
 * they cannot overshoot). A new UTC day starts the counts again. It inserts for each row of `from`
 * (one row, or none to spend nothing) and answers a row (RETURNING 1) only when the spend stayed
 * within `maxCount` and `maxBytes`; then nothing changed.
 */
export function spendQuota<Subject extends string>(
  subject: SqlParam<Subject>,
  from: SqlFragment,
): SqlFragment<Subject | "quota" | "bytes" | "maxCount" | "maxBytes"> {
  return sql<Subject | "quota" | "bytes" | "maxCount" | "maxBytes">`
    INSERT INTO quota_usage AS used (quota, subject, day, count, bytes)
    SELECT ${param("quota")}, ${subject}, (now() AT TIME ZONE 'UTC')::date, 1, ${param("bytes")}::bigint FROM ${from}
    ON CONFLICT (quota, subject) DO UPDATE SET
      day = EXCLUDED.day,
      count = CASE WHEN used.day = EXCLUDED.day THEN used.count + 1 ELSE 1 END,
      bytes = CASE WHEN used.day = EXCLUDED.day THEN used.bytes + EXCLUDED.bytes ELSE EXCLUDED.bytes END
    WHERE used.day <> EXCLUDED.day
       OR (used.count < ${param("maxCount")}::int AND used.bytes + EXCLUDED.bytes <= ${param("maxBytes")}::bigint)
    RETURNING 1`;
}

import { param, sql, statement } from "../../db/sql-statement";
import { spendQuota } from "./quota-spend";

/**
 * Spends one unit and `bytes` of a caller's daily quota on its own, for a write whose transaction is
 * the caller's (a logistics object with its notifications): no row answered when the quota is spent.
 * What is refused later (an id taken) has spent its unit all the same.
 */
export const spendQuotaAlone = statement<
  { quota: string; subject: string; bytes: number; maxCount: number; maxBytes: number },
  { spent: number }
>(
  "onerecord/quota-spend-alone",
  sql`WITH spent AS (${spendQuota(param("subject"), sql`(SELECT 1) AS one`)}) SELECT 1 AS spent FROM spent`,
);

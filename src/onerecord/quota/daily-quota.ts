import type { SqlRunner } from "../../db/sql-statement";
import { AppError } from "../../errors";
import { spendQuotaAlone } from "../sql/quota-spend-alone.sql";

/** A daily allowance of one kind of stored thing, per caller: a count and bytes per UTC day. */
export interface DailyQuota {
  /** The quota's name in quota_usage, and in the refusal. */
  readonly name: string;
  /** What it counts, for the refusal: "change requests". */
  readonly what: string;
  readonly perDay: number;
  readonly bytesPerDay: number;
  /** The setting that changes each number, for the refusal. */
  readonly settings: { readonly perDay: string; readonly bytesPerDay: string };
}

/** The refusal of a spend past `quota`: 429 QUOTA_EXCEEDED naming its settings, Retry-After at the next UTC midnight. */
export function exceeded(quota: DailyQuota, now: Date, detail?: string): AppError {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return new AppError(
    "QUOTA_EXCEEDED",
    `You may store ${quota.perDay} ${quota.what} or ${quota.bytesPerDay} bytes of them a day (UTC)${detail ? `; ${detail}` : ""}. ` +
      `Try again after midnight UTC; the operator sets ${quota.settings.perDay} and ${quota.settings.bytesPerDay}`,
    { retryAfterSeconds: Math.max(1, Math.ceil((midnight - now.getTime()) / 1000)) },
  );
}

/**
 * Spends one of `quota` and `bytes` for `subject` in a statement of its own (before a write whose
 * transaction holds other work); false when the quota is spent, nothing changed.
 */
export async function spendDailyQuota(
  runner: SqlRunner,
  quota: Pick<DailyQuota, "name" | "perDay" | "bytesPerDay">,
  subject: string,
  bytes: number,
): Promise<boolean> {
  const rows = await spendQuotaAlone.rows(runner, {
    quota: quota.name,
    subject,
    bytes,
    maxCount: quota.perDay,
    maxBytes: quota.bytesPerDay,
  });
  return rows.length > 0;
}

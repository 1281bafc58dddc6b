import { AppError } from "../../errors";
import type { SqlRunner } from "../../db/sql-statement";
import { spendQuota } from "../sql/quota-spend.sql";

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

/**
 * Spends one of `quota` and `bytes` for `subject` on `runner` (a transaction, so a request that fails
 * later spends nothing), or refuses with 429 QUOTA_EXCEEDED and Retry-After at the next UTC midnight.
 */
export async function spendDailyQuota(
  runner: SqlRunner,
  quota: DailyQuota,
  subject: string,
  bytes: number,
  now: Date = new Date(),
): Promise<void> {
  if (bytes > quota.bytesPerDay) throw exceeded(quota, now, `one is ${bytes} bytes`);
  const [spent] = await spendQuota.rows(runner, {
    quota: quota.name,
    subject,
    bytes,
    maxCount: quota.perDay,
    maxBytes: quota.bytesPerDay,
  });
  if (spent === undefined) throw exceeded(quota, now);
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

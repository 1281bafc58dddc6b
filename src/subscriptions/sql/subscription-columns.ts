import { sql } from "../../db/sql-statement";

/** A subscription row as the service reads it. */
export interface SubscriptionRow {
  id: string;
  awb: string;
  callback: string;
  states: string[];
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
}

/** The columns of a `SubscriptionRow`. */
export const COLUMNS = sql`id::text AS id, awb, callback, states, created_at AS "createdAt", updated_at AS "updatedAt",
  expires_at AS "expiresAt", disabled_at AS "disabledAt", disabled_reason AS "disabledReason"`;

/** A subscription that still counts: not expired (an expired one is deleted by retention later). */
export const LIVE = sql`(expires_at IS NULL OR expires_at > now())`;

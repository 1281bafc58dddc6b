import type { FieldError } from "../domain/checker";

/**
 * A rotation keeps signing with the secret it replaced for this long unless told otherwise: a day
 * for a receiver to deploy the new secret while deliveries still verify with the old one.
 */
export const DEFAULT_GRACE_SECONDS = 24 * 60 * 60;
/** The longest grace period a rotation may give the replaced secret. */
export const MAX_GRACE_SECONDS = 7 * 24 * 60 * 60;

/** A client's signing secrets, opened: the current one and the one a rotation replaced, if kept. */
export interface SigningSecrets {
  readonly current: string;
  readonly previous: { readonly secret: string; readonly expiresAt: Date } | null;
}

/** The problem with a requested grace period, or null: whole seconds from 0 to MAX_GRACE_SECONDS. */
export function graceSecondsProblem(value: number): FieldError | null {
  return Number.isInteger(value) && value >= 0 && value <= MAX_GRACE_SECONDS
    ? null
    : {
        field: "graceSeconds",
        message: `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS} (7 days), got ${String(value)}`,
      };
}

/** The secrets to sign with at `now`, newest first: the previous one only before its end time. */
export function secretsValidAt(keys: SigningSecrets, now: Date): string[] {
  return keys.previous && keys.previous.expiresAt.getTime() > now.getTime()
    ? [keys.current, keys.previous.secret]
    : [keys.current];
}

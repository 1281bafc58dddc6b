import { formatStates } from "../domain/status";
import type { Subscription } from "./subscription.service";

/**
 * A subscription as REST shows it (CONTRACT §1): `States` as one canonical string; then the fields
 * this gateway adds (docs/API.md): when it expires, and whether delivery disabled it.
 */
export function subscriptionView(s: Subscription): {
  subscriptionId: string;
  AWB: string;
  Callback: string;
  States: string;
  expiresAt: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
} {
  return {
    subscriptionId: s.id,
    AWB: s.awb,
    Callback: s.callback,
    States: formatStates(s.states),
    expiresAt: s.expiresAt?.toISOString() ?? null,
    disabledAt: s.disabledAt?.toISOString() ?? null,
    disabledReason: s.disabledReason,
  };
}

import { formatStates } from "../domain/status";
import type { Subscription } from "./subscription.service";

/** A subscription as REST shows it (CONTRACT §1): `States` as one canonical string. */
export function subscriptionView(s: Subscription): {
  subscriptionId: string;
  AWB: string;
  Callback: string;
  States: string;
} {
  return { subscriptionId: s.id, AWB: s.awb, Callback: s.callback, States: formatStates(s.states) };
}

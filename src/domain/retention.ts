/** What retention deletes, each kind after its own age (docs/RELIABILITY.md, "Retention"). */
export type RetentionKind =
  | "delivered_deliveries"
  | "dead_deliveries"
  | "events"
  | "carrier_statuses"
  | "expired_subscriptions"
  | "onerecord_subscriptions"
  | "onerecord_proposals"
  | "onerecord_notifications_received"
  | "onerecord_access_delegations";

/** Days each kind is kept after it ended (0: kept for ever). */
export type RetentionAges = Readonly<Record<RetentionKind, number>>;

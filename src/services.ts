import type { ClientService } from "./clients/client.service";
import type { DeliveryService } from "./delivery/delivery.service";
import type { MilestoneService } from "./milestones/milestone.service";
import type { HealthService } from "./health/health.service";
import type { PartnerAdmin } from "./onerecord/partners/partner-admin";
import type { StationService } from "./stations/station.service";
import type { SubscriptionService } from "./subscriptions/subscription.service";

/** Everything the transports (REST routes, GraphQL resolvers, websocket) call into. Built in app.ts. */
export interface Services {
  readonly health: HealthService;
  readonly stations: StationService;
  readonly clients: ClientService;
  readonly subscriptions: SubscriptionService;
  readonly milestones: MilestoneService;
  readonly deliveries: DeliveryService;
  /** The ONE Record partners' registry (the admin command line's partner:add, on the running gateway). */
  readonly oneRecordPartners: PartnerAdmin;
  /** AWB_CHECK_DIGIT=enforce */
  readonly enforceCheckDigit: boolean;
}

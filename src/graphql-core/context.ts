import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type DataLoader from "dataloader";
import type { Principal } from "../clients/principal";
import type { DeliveryCounts } from "../delivery/delivery.loaders";
import type { Services } from "../services";

/** What every resolver receives. One per HTTP request; per websocket operation for subscriptions. */
export interface GraphQLContext {
  readonly requestId: string;
  readonly log: Logger;
  readonly services: Services;
  /** The caller, resolved from its API key on first use (null without a key; an error for a bad one). */
  readonly auth: () => Promise<Principal | null>;
  /** Per-request batch loaders (never shared between requests). */
  readonly loaders: { readonly deliveryCounts: DataLoader<string, DeliveryCounts> };
  /** Over a websocket: the socket and the graphql-ws id of this operation (live feeds write their frames there). */
  readonly websocket?: { readonly socket: WebSocket; readonly subscriptionId: string };
}

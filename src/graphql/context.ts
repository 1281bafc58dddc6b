import type { Logger } from "pino";
import type { Services } from "../services";

/** What every resolver receives. One per HTTP request; per websocket operation for subscriptions. */
export interface GraphQLContext {
  readonly requestId: string;
  readonly log: Logger;
  readonly services: Services;
}

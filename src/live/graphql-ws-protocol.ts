import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, MessageType, parseMessage, type SubscribePayload } from "graphql-ws";
import type { WebSocket } from "ws";
import type { LiveFeed } from "./live-feed";

/** The part of a `ws` socket the protocol uses. */
export type ProtocolSocket = Pick<WebSocket, "protocol" | "readyState" | "send" | "close" | "bufferedAmount">;

/**
 * One socket's state: ours (address, key, slot) and the protocol's. Per socket the protocol keeps
 * this plain object and per operation a map entry (a running subscription's feed keeps its own
 * wiring, live-feed.ts); no suspended async function waits per socket or per operation.
 */
export interface SocketState {
  /** The client's address, for the per-address budget of failed authentications. */
  readonly address: string | undefined;
  /** Set once `connection_init` is authorised. */
  keyId: string | undefined;
  /** Gives back the socket's slot under its key's connection cap (set once it has one). */
  releaseSlot: (() => void) | undefined;
  initialised: boolean;
  acknowledged: boolean;
  /** The `connection_init` payload. */
  connectionParams: Record<string, unknown> | undefined;
  /** Closes the socket unless `connection_init` comes in time; cleared (and dropped) when it comes. */
  initWait: NodeJS.Timeout | undefined;
  /**
   * Operations by id: the subscribe's Reservation while it is set up or executed, its feed once a
   * subscription runs. A client may complete an id and send it again at once: each subscribe holds its
   * own Reservation, so only the subscribe whose Reservation is still there may answer or start a feed.
   */
  operations: Map<string, LiveFeed | Reservation> | undefined;
}

/** One `subscribe`'s claim on its id: the id is this subscribe's while `state.operations` holds this very object. */
export class Reservation {
  constructor(readonly id: string) {}
}

export function newSocketState(address: string | undefined): SocketState {
  return {
    address,
    keyId: undefined,
    releaseSlot: undefined,
    initialised: false,
    acknowledged: false,
    connectionParams: undefined,
    initWait: undefined,
    operations: undefined,
  };
}

export interface ProtocolHooks {
  /** `connection_init`: true acknowledges it; false means the hook refused and closed the socket. */
  connect(socket: ProtocolSocket, state: SocketState): Promise<boolean>;
  /**
   * A `subscribe` whose id the protocol has reserved: runs the operation and sends its frames, only
   * while `holds(state, reservation)` (the client may have completed the id, or sent it again, meanwhile).
   */
  subscribe(
    socket: ProtocolSocket,
    state: SocketState,
    reservation: Reservation,
    payload: SubscribePayload,
  ): Promise<void>;
}

/** `WebSocket.OPEN`: a socket that may be written to. */
export const OPEN = 1;

export function sendFrame(socket: ProtocolSocket, frame: string): void {
  if (socket.readyState === OPEN) socket.send(frame);
}

/** Whether the subscribe holding `reservation` is still wanted (its id not completed or reused, the socket open). */
export function holds(state: SocketState, reservation: Reservation): boolean {
  return state.operations?.get(reservation.id) === reservation;
}

/** A close reason within the protocol's 123 bytes, whatever the client's id held. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text);
  return bytes.length <= 123
    ? text
    : `${bytes
        .subarray(0, 120)
        .toString("utf8")
        .replace(/\uFFFD+$/, "")}…`;
}

/**
 * The graphql-transport-ws protocol (graphql-ws's message types, validation and close codes) with
 * the gateway's hooks. It does what graphql-ws's `makeServer` did, but keeps per socket only its
 * SocketState: graphql-ws keeps a closure set per socket and, per subscription, a suspended async
 * function with its message, arguments and context, which is most of an idle subscriber's memory.
 */
export function createProtocol(
  hooks: ProtocolHooks,
  { connectionInitWaitTimeoutMs }: { connectionInitWaitTimeoutMs: number },
) {
  return {
    /** A socket was opened: refuses another subprotocol and starts the wait for `connection_init`. */
    opened(socket: ProtocolSocket, state: SocketState): void {
      if (socket.protocol !== GRAPHQL_TRANSPORT_WS_PROTOCOL) {
        socket.close(CloseCode.SubprotocolNotAcceptable, "Subprotocol not acceptable");
        return;
      }
      state.initWait = setTimeout(() => {
        if (!state.initialised)
          socket.close(CloseCode.ConnectionInitialisationTimeout, "Connection initialisation timeout");
      }, connectionInitWaitTimeoutMs);
    },

    /** One text message; rejects only on a failure of the gateway's own (the transport closes with 4500). */
    async message(socket: ProtocolSocket, state: SocketState, text: string): Promise<void> {
      // A socket refused by `opened`, or closing for any reason: what it still sends is not read.
      if (socket.protocol !== GRAPHQL_TRANSPORT_WS_PROTOCOL || socket.readyState !== OPEN) return;
      let message: ReturnType<typeof parseMessage>;
      try {
        message = parseMessage(text);
      } catch {
        return socket.close(CloseCode.BadRequest, "Invalid message received");
      }
      switch (message.type) {
        case MessageType.ConnectionInit: {
          if (state.initialised)
            return socket.close(CloseCode.TooManyInitialisationRequests, "Too many initialisation requests");
          state.initialised = true;
          clearTimeout(state.initWait);
          state.initWait = undefined;
          if (message.payload && typeof message.payload === "object") state.connectionParams = message.payload;
          if (!(await hooks.connect(socket, state))) return socket.close(CloseCode.Forbidden, "Forbidden");
          state.acknowledged = true;
          return sendFrame(socket, `{"type":"connection_ack"}`);
        }
        case MessageType.Ping:
          return sendFrame(
            socket,
            JSON.stringify(
              message.payload ? { type: MessageType.Pong, payload: message.payload } : { type: MessageType.Pong },
            ),
          );
        case MessageType.Pong:
          return;
        case MessageType.Subscribe: {
          if (!state.acknowledged) return socket.close(CloseCode.Unauthorized, "Unauthorized");
          const { id, payload } = message;
          const operations = (state.operations ??= new Map());
          if (operations.has(id))
            return socket.close(CloseCode.SubscriberAlreadyExists, closeReason(`Subscriber for ${id} already exists`));
          const reservation = new Reservation(id);
          operations.set(id, reservation);
          try {
            await hooks.subscribe(socket, state, reservation, payload);
          } finally {
            // Still this subscribe's: the operation is over (a subscription that runs holds its feed here).
            if (holds(state, reservation)) state.operations?.delete(id);
          }
          return;
        }
        case MessageType.Complete: {
          const held = state.operations?.get(message.id);
          state.operations?.delete(message.id);
          if (held !== undefined && !(held instanceof Reservation)) await held.return();
          return;
        }
        default:
          throw new Error(`Unexpected message of type ${message.type} received`);
      }
    },

    /** The socket closed: its operations end, nothing more is sent. */
    closed(state: SocketState): void {
      clearTimeout(state.initWait);
      state.initWait = undefined;
      const operations = state.operations;
      state.operations = undefined;
      for (const held of operations?.values() ?? []) if (!(held instanceof Reservation)) void held.return();
    },
  };
}

export type Protocol = ReturnType<typeof createProtocol>;

import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, MessageType, parseMessage, type SubscribePayload } from "graphql-ws";
import type { WebSocket } from "ws";
import type { LiveFeed } from "./live-feed";

/** The part of a `ws` socket the protocol uses. */
export type ProtocolSocket = Pick<WebSocket, "protocol" | "readyState" | "send" | "close" | "bufferedAmount">;

/**
 * One socket's state: ours (address, key, slot) and the protocol's. A plain object per socket and a
 * map entry per operation is all an idle subscriber costs here; no closure, promise or suspended
 * function is kept per socket or per operation.
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
  /** Operations by id: null while one is being set up or executed, its feed once a subscription runs. */
  operations: Map<string, LiveFeed | null> | undefined;
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
   * A `subscribe` whose id the protocol has reserved: runs the operation and sends its frames. A
   * subscription's feed is put in `state.operations` under its id only while the id is still
   * reserved (the client may have completed it meanwhile).
   */
  subscribe(socket: ProtocolSocket, state: SocketState, id: string, payload: SubscribePayload): Promise<void>;
}

const OPEN = 1;

export function sendFrame(socket: ProtocolSocket, frame: string): void {
  if (socket.readyState === OPEN) socket.send(frame);
}

/** Whether `id` is still wanted by the client (not completed, socket not closed). */
export function stillWanted(state: SocketState, id: string): boolean {
  return state.operations?.has(id) ?? false;
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
      // A socket refused by `opened` is closing: what it still sends is not read.
      if (socket.protocol !== GRAPHQL_TRANSPORT_WS_PROTOCOL) return;
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
            return socket.close(CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
          operations.set(id, null);
          try {
            await hooks.subscribe(socket, state, id, payload);
          } finally {
            // Still reserved: the operation is over (a subscription that runs holds its feed here).
            if (operations.get(id) === null) operations.delete(id);
          }
          return;
        }
        case MessageType.Complete: {
          const feed = state.operations?.get(message.id);
          state.operations?.delete(message.id);
          await feed?.return();
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
      for (const feed of operations?.values() ?? []) void feed?.return();
    },
  };
}

export type Protocol = ReturnType<typeof createProtocol>;

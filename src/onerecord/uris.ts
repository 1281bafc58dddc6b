import { parseAwb } from "../domain/awb";

/**
 * The URIs of this ONE Record server's resources. Every one starts with the API's base URL
 * (ONE_RECORD_BASE_URL, or this server's own listening URL and base path, known only once it listens:
 * hence `base` is a function). A request's Host header never enters a URI.
 *
 * Stored bodies never hold these URIs: they hold local ids (`relative` / `absolute` below), so the
 * same database answers the same objects under any base URL, from any instance.
 */
export interface OneRecordUris {
  /** The API's base URL, without a trailing "/": "https://1r.example.com/onerecord". */
  base(): string;
  /** The server's own URI, the ServerInformation's `@id`: the base URL with a trailing "/". */
  serverUri(): string;
  objectUri(id: string): string;
  /** The list of an object's logistics events, and one of them. */
  eventsUri(objectId: string): string;
  eventUri(objectId: string, eventId: string): string;
  actionRequestUri(id: string): string;
  /** The id of one of this server's logistics objects from its URI; undefined for any other URI. */
  localIdOf(uri: string): string | undefined;
  /** The id of one of this server's action requests from its URI; undefined for any other URI. */
  actionRequestIdOf(uri: string): string | undefined;
}

const OBJECTS = "/logistics-objects/";
const ACTION_REQUESTS = "/action-requests/";
/**
 * What a local id may be: the AWB ids, station and organization ids, UUIDs. Never "." or "..", which
 * a URI's path resolves away (RFC 3986 §5.2.4): such an id would name another resource.
 */
const LOCAL_ID = /^(?!\.\.?$)[A-Za-z0-9._~-]{1,200}$/;

export function createOneRecordUris(base: () => string): OneRecordUris {
  const under = (prefix: string, uri: string): string | undefined => {
    const start = base() + prefix;
    if (!uri.startsWith(start)) return undefined;
    const id = uri.slice(start.length);
    return LOCAL_ID.test(id) ? id : undefined;
  };
  return {
    base,
    serverUri: () => `${base()}/`,
    objectUri: (id) => `${base()}${OBJECTS}${id}`,
    eventsUri: (objectId) => `${base()}${OBJECTS}${objectId}/logistics-events`,
    eventUri: (objectId, eventId) => `${base()}${OBJECTS}${objectId}/logistics-events/${eventId}`,
    actionRequestUri: (id) => `${base()}${ACTION_REQUESTS}${id}`,
    localIdOf: (uri) => under(OBJECTS, uri),
    actionRequestIdOf: (uri) => under(ACTION_REQUESTS, uri),
  };
}

/** A station's Location: "location-FRA". */
export function locationIdOf(stationCode: string): string {
  return `location-${stationCode}`;
}

/** The station code of a Location id, or undefined. */
export function stationCodeOfLocationId(id: string): string | undefined {
  return /^location-([A-Z0-9]{3})$/.exec(id)?.[1];
}

/** "020-12345675" → "waybill-020-12345675". */
export function waybillIdOf(awb: string): string {
  return `waybill-${awb}`;
}

/** "020-12345675" → "shipment-020-12345675". */
export function shipmentIdOf(awb: string): string {
  return `shipment-${awb}`;
}

/** "awb-020-12345675" → "020-12345675": the alias that redirects to the Waybill. */
export function awbOfAlias(id: string): string | undefined {
  return canonicalAwb(/^awb-(\d{3}-\d{8})$/.exec(id)?.[1]);
}

/** The AWB of an AWB's Waybill or Shipment id ("waybill-020-12345675", "shipment-…"); else undefined. */
export function awbOfObjectId(id: string): string | undefined {
  return canonicalAwb(/^(?:waybill|shipment)-(\d{3}-\d{8})$/.exec(id)?.[1]);
}

/** Which of an AWB's objects an id names. */
export function awbObjectKindOf(id: string): "waybill" | "shipment" | undefined {
  if (awbOfObjectId(id) === undefined) return undefined;
  return id.startsWith("waybill-") ? "waybill" : "shipment";
}

function canonicalAwb(text: string | undefined): string | undefined {
  return text === undefined ? undefined : parseAwb(text)?.canonical;
}

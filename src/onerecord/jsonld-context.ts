import context from "./vocabulary/context.json";

/**
 * The JSON-LD context every answer carries inline (never a remote one): the `cargo`, `api` and `xsd`
 * prefixes and the API's typed literals, as the specification's examples write them.
 */
export const ONE_RECORD_CONTEXT: Readonly<Record<string, unknown>> = context["@context"];

export const CARGO = "https://onerecord.iata.org/ns/cargo#";
export const API = "https://onerecord.iata.org/ns/api#";
export const XSD = "http://www.w3.org/2001/XMLSchema#";

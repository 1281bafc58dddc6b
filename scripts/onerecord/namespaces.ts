// The namespaces the ONE Record ontologies and the derived files use, and the prefixes derived files
// abbreviate them with.
export const RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
export const RDFS = "http://www.w3.org/2000/01/rdf-schema#";
export const OWL = "http://www.w3.org/2002/07/owl#";
export const XSD = "http://www.w3.org/2001/XMLSchema#";
export const SH = "http://www.w3.org/ns/shacl#";
export const CARGO = "https://onerecord.iata.org/ns/cargo#";
export const API = "https://onerecord.iata.org/ns/api#";
/** The code lists: each list is `CODES + name`, each member `CODES + name + "#" + code`. */
export const CODES = "https://onerecord.iata.org/ns/code-lists/";

/** Ordered so that the longest namespace that matches wins (none is a prefix of another today). */
export const PREFIXES: Readonly<Record<string, string>> = {
  rdf: RDF,
  rdfs: RDFS,
  owl: OWL,
  xsd: XSD,
  sh: SH,
  cargo: CARGO,
  api: API,
  codes: CODES,
};

/** `cargo:LogisticsEvent` for the cargo namespace's LogisticsEvent; other IRIs come back as they are. */
export function compactIri(iri: string): string {
  for (const [prefix, namespace] of Object.entries(PREFIXES)) {
    const local = iri.startsWith(namespace) ? iri.slice(namespace.length) : undefined;
    if (local !== undefined && /^[A-Za-z_][\w-]*$/.test(local)) return `${prefix}:${local}`;
  }
  return iri;
}

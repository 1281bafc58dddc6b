// src/onerecord/vocabulary/context.json: the JSON-LD context the gateway answers with inline.
//
// It follows the specification's examples: the prefixes cargo, api and xsd, and, as ServerInformation.json
// and the Error examples do for api:hasServerEndpoint or api:hasResource, a type coercion for each API
// property whose values are typed literals other than strings and booleans (xsd:anyURI, xsd:dateTime,
// the integers), so that such values compact to plain JSON strings and numbers and still expand to the
// right datatype. Cargo properties get no coercion: the examples write their typed values out
// ({"@type": "…#dateTime", "@value": …}).
//
// No prefix for the code-list namespace: every example writes code-list IRIs in full
// ("https://onerecord.iata.org/ns/code-lists/StatusCode#DEP"), and with a prefix in the context JSON-LD
// compaction would shorten them all (to "prefix:StatusCode#DEP").
import { API, CARGO, XSD, compactIri } from "./namespaces";
import type { OntologyModel } from "./ontology-model";
import { isDatatype } from "./ontology-queries";

const NATIVE_IN_JSON = new Set([`${XSD}string`, `${XSD}boolean`]);

export function jsonLdContext(api: OntologyModel): object {
  const coercions = [...api.properties.values()].flatMap((property) => {
    if (!property.iri.startsWith(API) || property.kind !== "datatype") return [];
    const range = property.range ?? restrictionRange(api, property.iri);
    if (range === undefined || !isDatatype(range) || NATIVE_IN_JSON.has(range)) return [];
    return [[compactIri(property.iri), { "@type": compactIri(range) }] as const];
  });
  return { "@context": { cargo: CARGO, api: API, xsd: XSD, ...Object.fromEntries(coercions) } };
}

/** The range the classes' restrictions give a property that declares no rdfs:range, if they agree. */
function restrictionRange(model: OntologyModel, propertyIri: string): string | undefined {
  const ranges = new Set(
    [...model.classes.values()].flatMap((c) => {
      const range = c.properties.get(propertyIri)?.range;
      return range === undefined ? [] : [range];
    }),
  );
  return ranges.size === 1 ? [...ranges][0] : undefined;
}

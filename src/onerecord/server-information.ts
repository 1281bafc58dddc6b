import api from "./vocabulary/api.json";
import cargo from "./vocabulary/cargo.json";
import { ONE_RECORD_CONTEXT } from "./jsonld-context";
import { CONTENT_LANGUAGE, JSON_LD, SUPPORTED_API_VERSIONS } from "./negotiation";
import type { OneRecordUris } from "./uris";
import { CARRIER_ORGANIZATION_ID } from "./identity/organizations";

/**
 * The `api:ServerInformation` of `GET {base}/`: the data holder is the carrier's Organization. The
 * ontologies are listed unversioned in hasSupportedOntology and versioned in
 * hasSupportedOntologyVersion, as the specification's text asks (its example lists versioned IRIs in
 * both): the cargo ontology, its code lists and the API ontology, in each version this server speaks.
 */
export function serverInformationBody(uris: OneRecordUris): Record<string, unknown> {
  return {
    "@context": ONE_RECORD_CONTEXT,
    "@id": uris.serverUri(),
    "@type": "api:ServerInformation",
    "api:hasDataHolder": { "@id": uris.objectUri(CARRIER_ORGANIZATION_ID) },
    "api:hasServerEndpoint": uris.base(),
    "api:hasSupportedApiVersion": [...SUPPORTED_API_VERSIONS],
    "api:hasSupportedContentType": [JSON_LD],
    "api:hasSupportedLanguage": [CONTENT_LANGUAGE],
    "api:hasSupportedOntology": [cargo.source.ontology, cargo.source.codeLists.ontology, api.source.ontology],
    "api:hasSupportedOntologyVersion": [
      cargo.source.versionIri,
      cargo.source.codeLists.versionIri,
      api.source.versionIri,
      api.source.comparedWith.versionIri,
    ],
  };
}

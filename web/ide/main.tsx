/**
 * The GraphQL IDE served at /graphql to browsers: GraphiQL, bundled at build time with every asset,
 * so nothing is fetched from the internet. The dashboard's API key, if one is stored, is the default
 * Authorization header; `?query=` in the address pre-fills the editor.
 */
import { GraphiQL } from "graphiql";
import "graphiql/graphiql.css";
import { createRoot } from "react-dom/client";
import { bearer, storedApiKey } from "../shared/api-key";
import { createGatewayFetcher } from "./fetcher";
import "./ide.css";

// Lines stay short enough for the editor's width at 1280 px (test/web.browser.test.ts).
const EXAMPLE = `# Station reads need no key. Milestones and
# subscriptions need an API key: put it in the
# Headers tab below as
# {"Authorization": "Bearer cgw_…"}
query Station {
  station(code: "FRA") {
    code
    name
    timeZone
    exportOpenNow: openAt(side: EXPORT)
  }
}

# Live milestones of an AWB (scope events:read):
# subscription Watch {
#   awbStatusChanged(awb: "020-12345675") {
#     state timestamp station flight
#   }
# }
`;

const params = new URLSearchParams(location.search);
const key = storedApiKey();
const fetcher = createGatewayFetcher();
const root = createRoot(document.getElementById("graphiql")!);
root.render(
  <GraphiQL
    fetcher={fetcher}
    defaultQuery={EXAMPLE}
    {...(params.has("query") ? { query: params.get("query")! } : {})}
    {...(params.has("variables") ? { variables: params.get("variables")! } : {})}
    defaultHeaders={key ? JSON.stringify({ Authorization: bearer(key) }, null, 2) : undefined}
    defaultEditorToolsVisibility={key ? "headers" : false}
  />,
);

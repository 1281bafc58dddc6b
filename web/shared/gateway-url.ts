/** The gateway's graphql-ws endpoint, on the page's own host (wss: when the page came over https:). */
export function graphqlWebsocketUrl(): string {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/graphql`;
}

/**
 * The AWB dashboard: an API key, a watch list of AWBs, and per AWB a timeline filled from the stored
 * history (GraphQL over HTTP) and then live (graphql-ws `awbStatusChanged` with `after`, so nothing
 * between the two is missed). Everything it shows is built as DOM text, never parsed HTML.
 */
import { bearer, storeApiKey, storedApiKey } from "../shared/api-key";
import { GraphQLRequestError, graphqlRequest } from "../shared/graphql-http";
import { judgeAwb } from "./awb-input";
import { h, replaceChildren } from "./dom";
import { stateName, stationTime, viewerTime, viewerTimeZone } from "./format";
import { openLiveConnection, type ConnectionState, type LiveConnection } from "./live-connection";
import { createStationDialog } from "./station-dialog";
import { MILESTONE_FIELDS, Timeline, loadWatched, saveWatched, type Milestone } from "./timeline";
import "./dashboard.css";

const HISTORY_QUERY = `query History($awb: String!) { milestones(awb: $awb) { ${MILESTONE_FIELDS} } }`;
const LIVE_SUBSCRIPTION = `subscription Watch($awb: String!, $after: String) { awbStatusChanged(awb: $awb, after: $after) { ${MILESTONE_FIELDS} } }`;
const STATION_ZONES_QUERY = `query StationZones($codes: [String!]) { stations(codes: $codes) { code timeZone } }`;

interface Watched {
  timeline: Timeline;
  card: HTMLElement;
  list: HTMLOListElement;
  status: HTMLElement;
  stop?: () => void;
}

const watched = new Map<string, Watched>();
const stationZones = new Map<string, string | null>();
let apiKey = storedApiKey();
let client: LiveConnection | undefined;
let connectionState: ConnectionState = { kind: "no-key" };

// ---- page skeleton -------------------------------------------------------------------------------
const connectionBadge = h("span", {
  class: "connection",
  role: "status",
  "aria-live": "polite",
  "data-state": "no-key",
});
const keyInput = h("input", {
  id: "api-key",
  type: "password",
  autocomplete: "off",
  spellcheck: "false",
  placeholder: "cgw_…",
  "aria-describedby": "key-help",
});
const keyForm = h(
  "form",
  { class: "key-form" },
  h("label", { for: "api-key" }, "API key"),
  keyInput,
  h("button", { type: "submit" }, "Connect"),
  h("button", { type: "button", class: "secondary", id: "forget-key" }, "Forget"),
  h("small", { id: "key-help", class: "muted" }, "Kept in this browser only; needs the events:read scope."),
);
const awbInput = h("input", {
  id: "awb-input",
  type: "text",
  inputmode: "numeric",
  autocomplete: "off",
  placeholder: "020-12345675",
  "aria-describedby": "awb-message",
});
const awbButton = h("button", { type: "submit" }, "Watch");
const awbMessage = h("p", { id: "awb-message", class: "field-message", "aria-live": "polite" });
const awbForm = h(
  "form",
  { class: "awb-form" },
  h("label", { for: "awb-input" }, "Watch an AWB"),
  awbInput,
  awbButton,
  awbMessage,
);
const cards = h("section", { class: "cards", "aria-label": "Watched AWBs" });
const emptyHint = h("p", { class: "empty-hint muted" }, "Add an AWB above to see its milestones here, live.");
const stationDialog = createStationDialog();

document.body.append(
  h("header", { class: "topbar" }, h("h1", {}, "AWB milestones"), connectionBadge),
  h("main", {}, h("div", { class: "controls" }, keyForm, awbForm), emptyHint, cards),
  h(
    "footer",
    { class: "muted" },
    `Times are shown in your zone (${viewerTimeZone}) and in the station's. `,
    h("a", { href: "/graphql" }, "GraphQL IDE"),
    " · ",
    h("a", { href: "/docs" }, "REST API"),
  ),
  stationDialog.element,
);

// ---- connection ----------------------------------------------------------------------------------
function showConnection(state: ConnectionState): void {
  connectionState = state;
  connectionBadge.dataset.state = state.kind;
  const text = {
    "no-key": "Not connected: enter an API key",
    connecting: "Connecting…",
    connected: "Live",
    reconnecting: "Reconnecting…",
    refused: `Key refused: ${state.kind === "refused" ? state.reason : ""}`,
  }[state.kind];
  connectionBadge.textContent = text;
  connectionBadge.title = state.kind === "reconnecting" ? state.reason : "";
}

function connect(): void {
  void client?.dispose();
  client = undefined;
  for (const entry of watched.values()) entry.stop?.();
  if (!apiKey) {
    showConnection({ kind: "no-key" });
    return;
  }
  client = openLiveConnection(apiKey, showConnection);
  for (const awb of watched.keys()) void follow(awb);
}

keyInput.value = apiKey ?? "";
keyForm.addEventListener("submit", (event) => {
  event.preventDefault();
  apiKey = keyInput.value.trim() || null;
  storeApiKey(apiKey);
  connect();
});
document.getElementById("forget-key")!.addEventListener("click", () => {
  apiKey = null;
  keyInput.value = "";
  storeApiKey(null);
  connect();
});

// ---- watching AWBs -------------------------------------------------------------------------------
let confirmedCheckDigit: string | null = null;

function showAwbVerdict(submitting: boolean): string | null {
  const verdict = judgeAwb(awbInput.value, new Set(watched.keys()));
  awbMessage.className = "field-message";
  awbInput.removeAttribute("aria-invalid");
  awbButton.textContent = "Watch";
  switch (verdict.kind) {
    case "empty":
      awbMessage.textContent = submitting ? "Type an AWB number first." : "";
      return null;
    case "invalid":
      awbMessage.textContent = verdict.message;
      awbMessage.classList.add("error");
      awbInput.setAttribute("aria-invalid", "true");
      return null;
    case "duplicate":
      awbMessage.textContent = `${verdict.awb} is already on the board.`;
      return null;
    case "check-digit":
      awbMessage.textContent = verdict.message;
      awbMessage.classList.add("warning");
      awbButton.textContent = "Watch anyway";
      // A second submit of the same number means the person has read the warning.
      if (submitting && confirmedCheckDigit === verdict.awb) return verdict.awb;
      if (submitting) confirmedCheckDigit = verdict.awb;
      return null;
    case "ok":
      awbMessage.textContent = submitting ? "" : `Will watch ${verdict.awb}.`;
      return verdict.awb;
  }
}

awbInput.addEventListener("input", () => {
  confirmedCheckDigit = null;
  showAwbVerdict(false);
});
awbForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const awb = showAwbVerdict(true);
  if (!awb) return;
  awbInput.value = "";
  awbMessage.textContent = "";
  awbButton.textContent = "Watch";
  confirmedCheckDigit = null;
  watch(awb);
  saveWatched([...watched.keys()]);
});

function watch(awb: string): void {
  const list = h("ol", { class: "timeline", "aria-label": `Milestones of ${awb}` });
  const status = h("p", { class: "card-status muted" });
  const remove = h(
    "button",
    { type: "button", class: "icon", "aria-label": `Stop watching ${awb}`, title: "Stop watching" },
    "×",
  );
  const latest = h("span", { class: "latest" });
  const card = h(
    "article",
    { class: "card", "data-awb": awb },
    h("header", {}, h("h2", {}, awb), latest, remove),
    status,
    list,
  );
  const entry: Watched = { timeline: new Timeline(awb), card, list, status };
  watched.set(awb, entry);
  cards.prepend(card);
  emptyHint.hidden = true;
  remove.addEventListener("click", () => {
    entry.stop?.();
    watched.delete(awb);
    card.remove();
    emptyHint.hidden = watched.size > 0;
    saveWatched([...watched.keys()]);
  });
  render(entry);
  void follow(awb);
}

/** History first, then the live stream from the last sequence seen. */
async function follow(awb: string): Promise<void> {
  const entry = watched.get(awb);
  if (!entry || !apiKey || !client) {
    if (entry) setCardStatus(entry, "Enter an API key to load milestones.");
    return;
  }
  const liveClient = client;
  setCardStatus(entry, "Loading history…");
  try {
    const { milestones } = await graphqlRequest<{ milestones: Milestone[] }>(HISTORY_QUERY, { awb }, bearer(apiKey));
    if (entry.timeline.add(milestones)) render(entry);
  } catch (error) {
    setCardStatus(
      entry,
      error instanceof GraphQLRequestError ? `History not loaded: ${error.message}` : String(error),
      true,
    );
    if (
      error instanceof GraphQLRequestError &&
      (error.code === "UNAUTHENTICATED" || error.code === "INSUFFICIENT_SCOPE")
    )
      return;
  }
  if (client !== liveClient || watched.get(awb) !== entry) return; // the key changed or the AWB was removed meanwhile
  if (entry.timeline.size === 0) setCardStatus(entry, "No milestones yet; new ones appear here as they are recorded.");
  else setCardStatus(entry, "");
  entry.stop = liveClient.subscribe<{ awbStatusChanged: Milestone }>(
    { query: LIVE_SUBSCRIPTION, variables: { awb, after: entry.timeline.lastSequence() } },
    {
      next: ({ data, errors }) => {
        if (errors?.[0]) setCardStatus(entry, errors[0].message, true);
        if (data && entry.timeline.add([data.awbStatusChanged])) {
          setCardStatus(entry, "");
          render(entry);
        }
      },
      error: (error) => {
        if (connectionState.kind !== "refused") setCardStatus(entry, `Live updates stopped: ${describe(error)}`, true);
      },
      complete: () => {},
    },
  );
}

function describe(error: unknown): string {
  if (Array.isArray(error)) return error.map((e: { message?: string }) => e.message ?? "error").join("; ");
  if (error && typeof error === "object" && "reason" in error)
    return typeof error.reason === "string" && error.reason !== "" ? error.reason : "connection closed";
  return error instanceof Error ? error.message : String(error);
}

function setCardStatus(entry: Watched, text: string, isError = false): void {
  entry.status.textContent = text;
  entry.status.classList.toggle("error", isError);
  entry.status.hidden = text === "";
}

// ---- rendering -----------------------------------------------------------------------------------
function render(entry: Watched): void {
  const milestones = entry.timeline.newestFirst();
  const latest = entry.card.querySelector(".latest")!;
  latest.textContent = milestones[0] ? stateName(milestones[0].state) : "";
  replaceChildren(entry.list, ...milestones.map(renderMilestone));
  void loadStationZones(milestones);
}

function renderMilestone(m: Milestone): HTMLElement {
  const local = m.station ? stationTime(m.timestamp, stationZones.get(m.station)) : null;
  const stationButton = m.station
    ? h(
        "button",
        { type: "button", class: "station-link", "data-station": m.station, title: `Details of station ${m.station}` },
        m.station,
      )
    : null;
  stationButton?.addEventListener("click", () => void stationDialog.open(m.station!));
  return h(
    "li",
    { class: "milestone", "data-state": m.state, "data-event-id": m.eventId },
    h("span", { class: "state-code" }, m.state),
    h(
      "div",
      { class: "milestone-body" },
      h(
        "p",
        { class: "state-name" },
        stateName(m.state),
        m.flight ? h("span", { class: "flight" }, ` · flight ${m.flight}`) : null,
      ),
      h(
        "p",
        { class: "times" },
        h(
          "time",
          { datetime: m.timestamp, class: "viewer-time", title: `Your time (${viewerTimeZone})` },
          viewerTime(m.timestamp),
        ),
        local
          ? h("span", { class: "station-time", title: "Station time" }, ` · ${local} at `, stationButton)
          : stationButton
            ? h("span", {}, " · at ", stationButton)
            : null,
      ),
      m.toaTimestamp ? h("p", { class: "toa" }, `Expected ${viewerTime(m.toaTimestamp)}`) : null,
    ),
  );
}

/** Station zones for local times: one request for every code not yet known, then a re-render. */
async function loadStationZones(milestones: readonly Milestone[]): Promise<void> {
  const missing = [
    ...new Set(milestones.map((m) => m.station).filter((c): c is string => !!c && !stationZones.has(c))),
  ];
  if (missing.length === 0) return;
  for (const code of missing) stationZones.set(code, null);
  try {
    const { stations } = await graphqlRequest<{ stations: Array<{ code: string; timeZone: string | null } | null> }>(
      STATION_ZONES_QUERY,
      { codes: missing },
    );
    for (const station of stations) if (station) stationZones.set(station.code, station.timeZone);
  } catch {
    for (const code of missing) stationZones.delete(code); // try again with the next render
    return;
  }
  for (const entry of watched.values())
    if (entry.timeline.newestFirst().some((m) => m.station && missing.includes(m.station))) render(entry);
}

// ---- start ---------------------------------------------------------------------------------------
for (const awb of loadWatched()) if (!watched.has(awb) && judgeAwb(awb, new Set()).kind !== "invalid") watch(awb);
connect();

import { graphqlRequest } from "../shared/graphql-http";
import { h, replaceChildren, type Child } from "./dom";
import { stationTime, weekdayName } from "./format";

interface Address {
  street: string | null;
  streetNo: string | null;
  building: string | null;
  zipCode: string | null;
  city: string | null;
}
interface Contact {
  generalPhone: string | null;
  generalEmail: string | null;
  handlingPhone: string | null;
  handlingEmail: string | null;
}
interface OpeningDay {
  day: string;
  hours: Array<{ open: string; close: string }>;
}
interface Side {
  address: Address | null;
  contact: Contact | null;
  openingHours: OpeningDay[] | null;
}
interface Product {
  available: boolean;
  temperatureRanges: Array<{ min: number; max: number }>;
  containerTypes: string[];
  services: string[];
  contact: { email: string | null; phone: string | null };
  comment: string | null;
}
interface StationDetails {
  code: string;
  name: string;
  countryLong: string | null;
  timeZone: string | null;
  freighterHandling: boolean | null;
  passengerAircraftHandling: boolean | null;
  truckHandling: boolean | null;
  exportOpen: boolean | null;
  importOpen: boolean | null;
  export: Side;
  import: Side & {
    ciscFee: string | null;
    firmsCode: string | null;
    storage: string | null;
    externalComment: string | null;
  };
  temperatureProducts: { active: Product; passive: Product };
}

const SIDE =
  "address { street streetNo building zipCode city } contact { generalPhone generalEmail handlingPhone handlingEmail } openingHours { day hours { open close } }";
const PRODUCT = "available temperatureRanges { min max } containerTypes services contact { email phone } comment";
const STATION_QUERY = `query StationDetails($code: String!) {
  station(code: $code) {
    code name countryLong timeZone freighterHandling passengerAircraftHandling truckHandling
    exportOpen: openAt(side: EXPORT) importOpen: openAt(side: IMPORT)
    export { ${SIDE} }
    import { ${SIDE} ciscFee firmsCode storage externalComment }
    temperatureProducts { active { ${PRODUCT} } passive { ${PRODUCT} } }
  }
}`;

/** The station details dialog: one <dialog>, filled each time a station in a timeline is opened. */
export function createStationDialog(): { element: HTMLDialogElement; open(code: string): Promise<void> } {
  const body = h("div", { class: "dialog-body" });
  const close = h("button", { type: "button", class: "dialog-close", "aria-label": "Close station details" }, "×");
  const element = h("dialog", { class: "station-dialog", "aria-labelledby": "station-title" }, close, body);
  close.addEventListener("click", () => element.close());
  element.addEventListener("click", (event) => {
    if (event.target === element) element.close(); // a click on the backdrop
  });

  return {
    element,
    async open(code) {
      replaceChildren(body, h("h2", { id: "station-title" }, code), h("p", { class: "muted" }, "Loading…"));
      if (!element.open) element.showModal();
      try {
        const { station } = await graphqlRequest<{ station: StationDetails | null }>(STATION_QUERY, { code });
        if (!station)
          replaceChildren(
            body,
            h("h2", { id: "station-title" }, code),
            h("p", { class: "error" }, `No station ${code} is known.`),
          );
        else replaceChildren(body, ...renderStation(station));
      } catch (error) {
        replaceChildren(
          body,
          h("h2", { id: "station-title" }, code),
          h("p", { class: "error" }, (error as Error).message),
        );
      }
    },
  };
}

function renderStation(station: StationDetails): Child[] {
  const now = new Date().toISOString();
  const local = stationTime(now, station.timeZone);
  return [
    h("h2", { id: "station-title" }, h("span", { class: "code" }, station.code), " ", station.name),
    h(
      "p",
      { class: "muted" },
      [station.countryLong, station.timeZone, local ? `local time ${local}` : null].filter(Boolean).join(" · "),
    ),
    h(
      "p",
      { class: "capabilities" },
      capability("Freighters", station.freighterHandling),
      capability("Passenger aircraft", station.passengerAircraftHandling),
      capability("Trucks", station.truckHandling),
    ),
    h(
      "div",
      { class: "sides" },
      renderSide("Export", station.export, station.exportOpen),
      renderSide("Import", station.import, station.importOpen, [
        ["CISC fee", station.import.ciscFee],
        ["FIRMS code", station.import.firmsCode],
        ["Storage", station.import.storage],
        ["Note", station.import.externalComment],
      ]),
    ),
    h(
      "section",
      { class: "products" },
      h("h3", {}, "Temperature-controlled handling"),
      renderProduct("Active containers", station.temperatureProducts.active),
      renderProduct("Passive", station.temperatureProducts.passive),
    ),
  ];
}

function capability(label: string, value: boolean | null): HTMLElement {
  const text = value === null ? "unknown" : value ? "yes" : "no";
  return h(
    "span",
    { class: `capability ${value === true ? "yes" : value === false ? "no" : "unknown"}` },
    `${label}: ${text}`,
  );
}

function openBadge(open: boolean | null): HTMLElement {
  if (open === null) return h("span", { class: "badge unknown" }, "hours unknown");
  return h(
    "span",
    { class: `badge ${open ? "open" : "closed"}`, "data-open": String(open) },
    open ? "open now" : "closed now",
  );
}

function renderSide(
  title: string,
  side: Side,
  open: boolean | null,
  extra: Array<[string, string | null]> = [],
): HTMLElement {
  const address = side.address;
  const addressLines = address
    ? [
        address.building,
        [address.street, address.streetNo].filter(Boolean).join(" "),
        [address.zipCode, address.city].filter(Boolean).join(" "),
      ].filter((line) => line)
    : [];
  const contact = side.contact;
  const contacts: Array<[string, string | null | undefined]> = [
    ["General", contact?.generalPhone],
    ["General email", contact?.generalEmail],
    ["Handling", contact?.handlingPhone],
    ["Handling email", contact?.handlingEmail],
  ];
  return h(
    "section",
    { class: "side", "data-side": title.toLowerCase() },
    h("h3", {}, title, " ", openBadge(open)),
    h(
      "address",
      {},
      ...(addressLines.length > 0
        ? addressLines.flatMap((line, i) => (i === 0 ? [line] : [h("br"), line]))
        : ["No address given"]),
    ),
    definitionList([...contacts, ...extra]),
    renderHours(side.openingHours),
  );
}

function definitionList(rows: Array<[string, string | null | undefined]>): HTMLElement {
  const present = rows.filter((row): row is [string, string] => typeof row[1] === "string" && row[1] !== "");
  return h("dl", {}, ...present.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

function renderHours(days: OpeningDay[] | null): HTMLElement {
  if (!days || days.length === 0) return h("p", { class: "muted" }, "Opening hours not given");
  return h(
    "table",
    { class: "hours" },
    h("caption", {}, "Opening hours (station time)"),
    h(
      "tbody",
      {},
      ...days.map((day) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, weekdayName(day.day)),
          h("td", {}, day.hours.length === 0 ? "closed" : day.hours.map((i) => `${i.open}–${i.close}`).join(", ")),
        ),
      ),
    ),
  );
}

function renderProduct(title: string, product: Product): HTMLElement {
  if (!product.available)
    return h("div", { class: "product" }, h("h4", {}, title), h("p", { class: "muted" }, "Not offered"));
  return h(
    "div",
    { class: "product" },
    h("h4", {}, title),
    h(
      "p",
      {},
      product.temperatureRanges.length > 0
        ? product.temperatureRanges.map((r) => `${r.min} to ${r.max} °C`).join(" · ")
        : "Ranges not given",
    ),
    definitionList([
      ["Containers", product.containerTypes.join(", ")],
      ["Services", product.services.join("; ")],
      ["Email", product.contact.email],
      ["Phone", product.contact.phone],
      ["Note", product.comment],
    ]),
  );
}

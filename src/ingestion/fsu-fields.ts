import { isFlightDesignator } from "../domain/flight";
import { isIataCode } from "../domain/iata";
import type { Quantity } from "./carrier-message";
import { MONTHS } from "./message-time";

/**
 * Readers of the Cargo-IMP data elements an FSU status line is made of (Cargo-IMP Manual, 34th
 * edition: the FSU/14 element layout). Each returns the value, or `{ problem }` saying what is wrong
 * with the text; none throws.
 */

export type Read<T> = { value: T; problem?: undefined } | { value?: undefined; problem: string };

/** Day and month, optional actual time hhmm, optional day change indicator: "16OCT", "16OCT1317", "20NOV1300-P". */
const DAY_MONTH = /^(\d{2})([A-Z]{3})(?:(\d{2})(\d{2}))?(?:-([A-Z]))?$/;
/** Type of time indicator (A actual, E estimated, S scheduled…), hhmm, optional day change: "A0930", "E1230-N". */
const TIME_INFO = /^([A-Z])(\d{2})(\d{2})(?:-([A-Z]))?$/;
/** Shipment description code, pieces, optional weight code and weight, optional total pieces: "T1K100", "P2K505.0T10". */
const QUANTITY = /^([TPDS])(\d{1,5})(?:([KL])(\d{1,7}(?:\.\d{1,3})?|\.\d{1,3}))?(?:T(\d{1,5}))?$/;
/** A carrier code: two characters (IATA) or three letters (ICAO). */
const CARRIER = /^(?:[A-Z0-9]{2}|[A-Z]{3})$/;
const DISCREPANCY_CODE = /^[A-Z]{4}$/;

/** Cargo-IMP's day change indicators: the time is on the next or on the previous day. */
export const DAY_CHANGES: Readonly<Record<string, number>> = { N: 1, P: -1 };

export interface DayMonth {
  day: number;
  month: number;
  time: { hour: number; minute: number } | null;
  /** Days to add for the time (day change indicator), 0 without one. */
  dayChange: number;
}

export interface TimeInfo {
  /** A actual, E estimated, S scheduled (others are kept as given). */
  type: string;
  hour: number;
  minute: number;
  dayChange: number;
}

export const isDayMonthLike = (token: string) => DAY_MONTH.test(token);
/** A token meant as a quantity (shipment code and a digit), whether or not it is a valid one. */
export const isQuantityLike = (token: string) => /^[TPDS]\d/.test(token);
export const isRouteLike = (token: string) => /^[A-Z]{6}$/.test(token);
export const isDiscrepancyCodeLike = (token: string) => DISCREPANCY_CODE.test(token);

function dayChangeOf(letter: string | undefined): Read<number> {
  if (letter === undefined) return { value: 0 };
  const change = DAY_CHANGES[letter];
  return Object.hasOwn(DAY_CHANGES, letter) && change !== undefined
    ? { value: change }
    : { problem: `-${letter} is not a day change indicator (-N next day, -P previous day)` };
}

function timeOfDay(hh: string, mm: string): { hour: number; minute: number } | null {
  const hour = Number(hh);
  const minute = Number(mm);
  return hour <= 23 && minute <= 59 ? { hour, minute } : null;
}

export function readDayMonth(token: string): Read<DayMonth> {
  const match = DAY_MONTH.exec(token);
  if (!match) return { problem: `${JSON.stringify(token)} is not a day and month such as 16OCT (or 16OCT1317)` };
  const [, dd, mon, hh, mm, change] = match as unknown as [string, string, string, string?, string?, string?];
  const month = (MONTHS as readonly string[]).indexOf(mon) + 1;
  const day = Number(dd);
  if (month === 0) return { problem: `${mon} is not a month (JAN … DEC)` };
  if (day < 1 || day > 31) return { problem: `${dd} is not a day of the month` };
  let time: DayMonth["time"] = null;
  if (hh !== undefined && mm !== undefined) {
    time = timeOfDay(hh, mm);
    if (!time) return { problem: `${hh}${mm} is not a time of day (hhmm, 0000 to 2359)` };
  }
  const dayChange = dayChangeOf(change);
  if (dayChange.problem !== undefined) return dayChange;
  return { value: { day, month, time, dayChange: dayChange.value } };
}

export function readTimeInfo(token: string): Read<TimeInfo> {
  const match = TIME_INFO.exec(token);
  if (!match) return { problem: `${JSON.stringify(token)} is not time information such as A0930 or E1230-N` };
  const [, type, hh, mm, change] = match as unknown as [string, string, string, string, string?];
  const time = timeOfDay(hh, mm);
  if (!time) return { problem: `${hh}${mm} is not a time of day (hhmm, 0000 to 2359)` };
  const dayChange = dayChangeOf(change);
  if (dayChange.problem !== undefined) return dayChange;
  return { value: { type, ...time, dayChange: dayChange.value } };
}

export function readQuantity(token: string): Read<Quantity> {
  const match = QUANTITY.exec(token);
  if (!match)
    return {
      problem: `${JSON.stringify(token)} is not a quantity such as T1K100 (T or P, pieces, K or L and weight) or P2K50.5T10`,
    };
  const [, shipment, pieces, unit, weight, total] = match as unknown as [
    string,
    Quantity["shipment"],
    string,
    "K" | "L" | undefined,
    string | undefined,
    string | undefined,
  ];
  return {
    value: {
      shipment,
      pieces: Number(pieces),
      weight: weight === undefined ? null : Number(weight),
      weightUnit: unit ?? null,
      totalPieces: total === undefined ? null : Number(total),
    },
  };
}

export function readAirport(token: string | undefined, what: string): Read<string> {
  if (token === undefined || token === "") return { problem: `has no ${what} (a three-letter IATA code)` };
  return isIataCode(token) ? { value: token } : { problem: `${JSON.stringify(token)} is not an IATA airport code` };
}

export function readFlight(token: string): Read<string> {
  return isFlightDesignator(token)
    ? { value: token }
    : { problem: `${JSON.stringify(token)} is not a flight designator such as LH400` };
}

export function readCarrier(token: string | undefined): Read<string> {
  if (token === undefined || token === "") return { problem: "has no carrier code (such as LH)" };
  return CARRIER.test(token)
    ? { value: token }
    : { problem: `${JSON.stringify(token)} is not a carrier code such as LH` };
}

/**
 * How a gateway status's line is laid out (after "CODE/"):
 * - event:       day+month[time] / airport / quantity / …                    RCS NFD DLV DDL
 * - transfer:    carrier / day+month[time] / airport / quantity / …          RCT TFD
 * - departure:   [flight] / [day+month] / departure+arrival airports / quantity / [dep time] / [arr time]   MAN DEP
 * - arrival:     [flight] / day+month[time][-N|-P] / arrival airport / quantity / [dep time] / [arr time]    ARR RCF TOA
 * - discrepancy: [flight] / day+month[time] / airport / discrepancy code / quantity                          DIS
 * TOA is no Cargo-IMP status; the gateway reads it in the arrival layout, its new time of arrival in
 * the day+month+time or the arrival time.
 */
export type LineShape = "event" | "transfer" | "departure" | "arrival" | "discrepancy";

/** What a status line says, before its times are placed. */
export interface LineReading {
  flight: string | null;
  carrier: string | null;
  date: DayMonth | null;
  station: string | null;
  from: string | null;
  to: string | null;
  quantity: Quantity | null;
  departureTime: TimeInfo | null;
  arrivalTime: TimeInfo | null;
  discrepancy: string | null;
}

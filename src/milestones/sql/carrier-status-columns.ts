import { sqlText } from "../../db/sql-statement";

/** The columns of carrier_status a record writes, with their SQL types (the jsonb records are read with them). */
const FIELDS = [
  ["status_key", "text"],
  ["awb", "text"],
  ["code", "text"],
  ["mapped", "boolean"],
  ["reason", "text"],
  ["format", "text"],
  ["source_line", "int"],
  ["source_element", "text"],
  ["source_text", "text"],
  ["occurred_at", "timestamptz"],
  ["time_basis", "text"],
  ["station", "text"],
  ["flight", "text"],
  ["flight_date", "text"],
  ["carrier_code", "text"],
  ["discrepancy", "text"],
  ["toa_timestamp", "timestamptz"],
  ["shipment", "text"],
  ["pieces", "int"],
  ["weight", "double precision"],
  ["weight_unit", "text"],
  ["total_pieces", "int"],
  ["ordinal", "int"],
] as const;

export type CarrierStatusColumn = (typeof FIELDS)[number][0];

/** `status_key text, awb text, …`: a record type for jsonb_to_recordset. */
export const RECORD = sqlText(FIELDS.map(([name, type]) => `${name} ${type}`).join(", "));
/** `status_key, awb, …` */
export const COLUMNS = sqlText(FIELDS.map(([name]) => name).join(", "));
/** `c.status_key, c.awb, …` */
export const COLUMNS_OF_C = sqlText(FIELDS.map(([name]) => `c.${name}`).join(", "));

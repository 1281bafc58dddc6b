import { sqlText } from "../../db/sql-statement";

/** A logistics object's row as the object statements answer it. */
export interface ObjectRow {
  id: string;
  type: string;
  types: string[];
  /** Expanded JSON-LD with local ids. */
  body: Record<string, unknown>;
  revision: number;
  awb: string | null;
  created_by: string;
  created_at: Date;
  last_modified: Date;
}

export const OBJECT_COLUMNS = sqlText("id, type, types, body, revision, awb, created_by, created_at, last_modified");

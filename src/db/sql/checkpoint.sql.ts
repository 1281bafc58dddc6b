import { sqlText, statement } from "../sql-statement";

/**
 * CHECKPOINT: writes every dirty page and lets PostgreSQL recycle the write-ahead log before it. For
 * the embedded database, which has no checkpointer process: without it, its `pg_wal` only grows while
 * it runs (in memory for `memory://`), and a start after a crash replays all of it.
 */
export const checkpoint = statement("db/checkpoint", sqlText("CHECKPOINT"));

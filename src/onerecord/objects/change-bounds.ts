/**
 * What one change request may hold. Compacting a stored Change for an answer costs about 0.7 ms of CPU
 * per operation (jsonld.js), so these bound what each request costs every later reader, and how many
 * an audit trail can show.
 */

/** Operations in one api:Change (each with exactly one api:o). */
export const MAX_CHANGE_OPERATIONS = 50;
/** The stored change request's JSON text, in bytes. */
export const MAX_CHANGE_REQUEST_BYTES = 256 * 1024;

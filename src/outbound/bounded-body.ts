/** An answer's body longer than a reader allows: the rest was not read. */
export class BodyTooLarge extends Error {}

/**
 * The bytes of an answer's body (an undici `Dispatcher.ResponseData['body']`), at most `maxBytes`:
 * past that the body is destroyed, nothing more is read, and BodyTooLarge is thrown. For the answers of
 * servers this gateway asks (partners, the token endpoint), so none can make it buffer without bound.
 */
export async function readBoundedBody(
  body: AsyncIterable<Buffer> & { destroy?: (error?: Error) => unknown },
  maxBytes: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy?.();
      throw new BodyTooLarge(`its answer is over ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
